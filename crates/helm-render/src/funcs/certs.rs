//! Sprig's certificate functions (`genPrivateKey`, `genCA`, `genSelfSignedCert`, `genSignedCert`,
//! their `…WithKey` forms and `buildCustomCert`): RSA keys and X.509 v3 certificates laid out as
//! Go's `crypto/x509` lays them out (same extensions, order and criticality), PEM-encoded.
//! Keys and serial numbers are random, so only the shape can match Helm's output.

use std::rc::Rc;

use base64::Engine;
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey};
use rsa::pkcs8::{DecodePrivateKey, EncodePublicKey};
use rsa::{Pkcs1v15Sign, RsaPrivateKey};
use sha2::Digest;

use super::strings::{int, s};
use gotmpl::{FnError, FuncMap, Object, Param, Value};

type R = Result<Value, FnError>;

/// What Sprig's functions return: `sprig.certificate{Cert, Key}`, both PEM strings.
#[derive(Debug)]
pub struct Certificate {
    pub cert: String,
    pub key: String,
}

impl Object for Certificate {
    fn type_name(&self) -> String {
        "sprig.certificate".into()
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Cert" => Some(Value::string(self.cert.clone())),
            "Key" => Some(Value::string(self.key.clone())),
            _ => None,
        }
    }
    fn display(&self) -> String {
        format!("{{{} {}}}", self.cert, self.key)
    }
    fn display_plus(&self) -> String {
        format!("{{Cert:{} Key:{}}}", self.cert, self.key)
    }
    fn json_fields(&self) -> Option<Vec<(String, Value)>> {
        Some(vec![("Cert".into(), Value::string(self.cert.clone())), ("Key".into(), Value::string(self.key.clone()))])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub(super) fn add(map: &mut FuncMap) {
    use Param::{Int, List, Str};
    const CERTIFICATE: Param = Param::Struct("sprig.certificate");
    map.add("genPrivateKey", &[Str], None, |_, a| generate_private_key(s(&a[0])).map(Value::string));
    map.add("buildCustomCert", &[Str, Str], None, |_, a| build_custom_cert(s(&a[0]), s(&a[1])));
    map.add("genCA", &[Str, Int], None, |_, a| {
        let key = new_rsa_key(2048)?;
        issue(&Template::authority(s(&a[0]), int(&a[1])), key, None)
    });
    map.add("genCAWithKey", &[Str, Int, Str], None, |_, a| {
        let key = key_arg(&a[2])?;
        issue(&Template::authority(s(&a[0]), int(&a[1])), key, None)
    });
    map.add("genSelfSignedCert", &[Str, List, List, Int], None, |_, a| {
        let template = Template::leaf(s(&a[0]), &a[1], &a[2], int(&a[3]))?;
        issue(&template, new_rsa_key(2048)?, None)
    });
    map.add("genSelfSignedCertWithKey", &[Str, List, List, Int, Str], None, |_, a| {
        let key = key_arg(&a[4])?;
        issue(&Template::leaf(s(&a[0]), &a[1], &a[2], int(&a[3]))?, key, None)
    });
    map.add("genSignedCert", &[Str, List, List, Int, CERTIFICATE], None, |_, a| {
        let ca = certificate_arg(&a[4])?;
        let template = Template::leaf(s(&a[0]), &a[1], &a[2], int(&a[3]))?;
        let signer = Signer::from_ca(ca)?;
        issue(&template, new_rsa_key(2048)?, Some(signer))
    });
    map.add("genSignedCertWithKey", &[Str, List, List, Int, CERTIFICATE, Str], None, |_, a| {
        let ca = certificate_arg(&a[4])?;
        let key = key_arg(&a[5])?;
        let template = Template::leaf(s(&a[0]), &a[1], &a[2], int(&a[3]))?;
        let signer = Signer::from_ca(ca)?;
        issue(&template, key, Some(signer))
    });
}

fn list_items(v: &Value) -> Vec<Value> {
    match v {
        Value::List(l) => l.items.clone(),
        _ => Vec::new(),
    }
}

/// The PEM private key argument of the `…WithKey` functions, with Sprig's error wording.
fn key_arg(v: &Value) -> Result<RsaPrivateKey, FnError> {
    parse_key_pem(s(v)).map_err(|e| FnError::from(format!("parsing private key: {e}")))
}

/// The certificate argument; `Param::Struct` has already refused other types with Go's message,
/// so the error here only guards against a caller that bypasses the executor.
fn certificate_arg(v: &Value) -> Result<&Certificate, FnError> {
    if let Value::Object(o) = v {
        if let Some(c) = o.as_any().downcast_ref::<Certificate>() {
            return Ok(c);
        }
    }
    Err(format!("wrong type for value; expected sprig.certificate; got {}", v.type_name()).into())
}

fn new_rsa_key(bits: usize) -> Result<RsaPrivateKey, FnError> {
    // Key generation is seconds of CPU at 4096 bits: bounded per render like other runaway work.
    gotmpl::exec::charge_expensive_call("RSA key generation", if bits > 2048 { 32 } else { 4 })?;
    RsaPrivateKey::new(&mut rand_core::OsRng, bits).map_err(|e| format!("error generating rsa key: {e}").into())
}

fn generate_private_key(kind: &str) -> Result<String, FnError> {
    Ok(match kind {
        "" | "rsa" => key_pem(&new_rsa_key(4096)?),
        "ecdsa" => {
            gotmpl::exec::charge_expensive_call("ECDSA key generation", 1)?;
            let key = p256::SecretKey::random(&mut rand_core::OsRng);
            // SEC 1 ECPrivateKey with the curve named and the public point, as Go's MarshalECPrivateKey writes it.
            use p256::elliptic_curve::sec1::ToEncodedPoint;
            let point = key.public_key().to_encoded_point(false);
            let body = [
                der::integer(&[1]),
                der::octet_string(&key.to_bytes()),
                der::tlv(0xa0, &der::oid(der::OID_PRIME256V1)),
                der::tlv(0xa1, &der::bit_string(point.as_bytes(), 0)),
            ];
            pem("EC PRIVATE KEY", &der::seq(&body.concat()))
        }
        "ed25519" => {
            // PKCS#8 holding the 32-byte seed, as Go's MarshalPKCS8PrivateKey writes an Ed25519 key.
            let seed = super::crypto::secure_random::<32>();
            let algorithm = der::seq(&der::oid(der::OID_ED25519));
            pem("PRIVATE KEY", &der::seq(&[der::integer(&[0]), algorithm, der::octet_string(&der::octet_string(&seed))].concat()))
        }
        // Sprig's DSA parameter generation (L2048N256) is the one key type not implemented; like Sprig's
        // own failures, this is reported in the returned string.
        "dsa" => "failed to generate dsa params: DSA key generation is not implemented here".to_string(),
        other => format!("Unknown type {other}"),
    })
}

fn pem(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

fn key_pem(key: &RsaPrivateKey) -> String {
    pem("RSA PRIVATE KEY", key.to_pkcs1_der().expect("an RSA key always encodes").as_bytes())
}

/// The first PEM block in `text`: (label, DER bytes).
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = rest[..label_end].to_string();
    let body_start = &rest[label_end + 5..];
    let end_marker = format!("-----END {label}-----");
    let body_end = body_start.find(&end_marker)?;
    let body: String = body_start[..body_end].chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body).ok()?;
    Some((label, der))
}

/// Why a PEM private key could not be used (Sprig's texts, where Sprig has one).
#[derive(Debug, thiserror::Error)]
enum KeyError {
    #[error("no PEM data in input")]
    NoPem,
    #[error("decoding PEM as PKCS#8: {0}")]
    Pkcs8(#[source] rsa::pkcs8::Error),
    #[error("parsing RSA private key from PEM: {0}")]
    Pkcs1(#[source] rsa::pkcs1::Error),
    /// An EC or DSA key: Sprig takes them, this implementation signs with RSA only.
    #[error("only RSA keys can sign here, not {0}")]
    Unsupported(String),
    /// A `… PRIVATE KEY` block of another type.
    #[error("invalid private key type {0}")]
    InvalidType(String),
    /// A PEM block that is not a private key (the block's type).
    #[error("no private key data in PEM block of type {0}")]
    NotAKey(String),
}

fn parse_key_pem(text: &str) -> Result<RsaPrivateKey, KeyError> {
    let (label, der) = pem_decode(text).ok_or(KeyError::NoPem)?;
    match label.as_str() {
        "PRIVATE KEY" => RsaPrivateKey::from_pkcs8_der(&der).map_err(KeyError::Pkcs8),
        "RSA PRIVATE KEY" => RsaPrivateKey::from_pkcs1_der(&der).map_err(KeyError::Pkcs1),
        "EC PRIVATE KEY" | "DSA PRIVATE KEY" => Err(KeyError::Unsupported(label)),
        other if other.ends_with(" PRIVATE KEY") => Err(KeyError::InvalidType(label)),
        _ => Err(KeyError::NotAKey(label)),
    }
}

/// A certificate whose DER does not hold the fields issuing reads (Go's x509 text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("x509: malformed certificate")]
struct MalformedCertificate;

fn build_custom_cert(b64_cert: &str, b64_key: &str) -> R {
    let b64 = base64::engine::general_purpose::STANDARD;
    let cert = b64.decode(b64_cert).map_err(|_| FnError::from("unable to decode base64 certificate"))?;
    let key = b64.decode(b64_key).map_err(|_| FnError::from("unable to decode base64 private key"))?;
    let cert = String::from_utf8_lossy(&cert).into_owned();
    let key = String::from_utf8_lossy(&key).into_owned();
    let (_, der) = pem_decode(&cert).ok_or_else(|| FnError::from("unable to decode certificate"))?;
    parse_certificate(&der).map_err(|e| FnError::from(format!("error parsing certificate: decodedCert.Bytes: {e}")))?;
    parse_key_pem(&key).map_err(|e| FnError::from(format!("error parsing private key: {e}")))?;
    Ok(Value::Object(Rc::new(Certificate { cert, key })))
}

/// What a certificate asks for, as Sprig's `getBaseCertTemplate` fills it.
struct Template {
    common_name: String,
    ips: Vec<Vec<u8>>,
    dns_names: Vec<String>,
    days_valid: i64,
    is_ca: bool,
}

impl Template {
    fn authority(cn: &str, days: i64) -> Template {
        Template { common_name: cn.to_string(), ips: vec![], dns_names: vec![], days_valid: days, is_ca: true }
    }

    fn leaf(cn: &str, ips: &Value, dns: &Value, days: i64) -> Result<Template, FnError> {
        let mut ip_bytes = Vec::new();
        for ip in list_items(ips) {
            let Some(text) = ip.as_str() else {
                return Err(format!("error parsing ip: {} is not a string", gotmpl::fmt::sprint_value(&ip)).into());
            };
            let parsed: std::net::IpAddr = text.parse().map_err(|_| FnError::from(format!("error parsing ip: {text}")))?;
            ip_bytes.push(match parsed {
                std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
                std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                    Some(v4) => v4.octets().to_vec(),
                    None => v6.octets().to_vec(),
                },
            });
        }
        let mut dns_names = Vec::new();
        for name in list_items(dns) {
            let Some(text) = name.as_str() else {
                return Err(format!("error processing alternate dns name: {} is not a string", gotmpl::fmt::sprint_value(&name)).into());
            };
            dns_names.push(text.to_string());
        }
        Ok(Template { common_name: cn.to_string(), ips: ip_bytes, dns_names, days_valid: days, is_ca: false })
    }
}

/// The issuing side of a certificate: its name, key and key identifier.
struct Signer {
    subject_der: Vec<u8>,
    key: RsaPrivateKey,
    subject_key_id: Option<Vec<u8>>,
}

impl Signer {
    fn from_ca(ca: &Certificate) -> Result<Signer, FnError> {
        let (_, der) = pem_decode(&ca.cert).ok_or_else(|| FnError::from("unable to decode certificate"))?;
        let parsed =
            parse_certificate(&der).map_err(|e| FnError::from(format!("error parsing certificate: decodedSignerCert.Bytes: {e}")))?;
        let key = parse_key_pem(&ca.key).map_err(|e| FnError::from(format!("error parsing private key: {e}")))?;
        Ok(Signer { subject_der: parsed.subject_der, key, subject_key_id: parsed.subject_key_id })
    }
}

/// Builds, signs and PEM-encodes a certificate for `key`; self-signed when there is no signer.
fn issue(template: &Template, key: RsaPrivateKey, signer: Option<Signer>) -> R {
    let subject = der::name(&template.common_name);
    let public_key = key.to_public_key().to_public_key_der().map_err(|e| FnError::from(format!("error creating certificate: {e}")))?;
    let spki = public_key.as_bytes().to_vec();
    let (issuer, signing_key, authority_key_id) = match &signer {
        Some(s) => (s.subject_der.clone(), &s.key, if s.subject_der != subject { s.subject_key_id.clone() } else { None }),
        None => (subject.clone(), &key, None),
    };

    let mut serial = super::crypto::secure_random::<16>().to_vec();
    serial[0] &= 0x7f; // a non-negative 128-bit number, as rand.Int(2^128) gives
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    let not_after = now.saturating_add(template.days_valid.saturating_mul(86_400));

    let mut extensions = Vec::new();
    // digitalSignature | keyEncipherment (| keyCertSign for a CA), minimal bit length as Go writes it.
    let key_usage = if template.is_ca { der::bit_string(&[0xa4], 2) } else { der::bit_string(&[0xa0], 5) };
    extensions.push(der::extension(der::OID_KEY_USAGE, true, &key_usage));
    let server_and_client = der::seq(&[der::oid(der::OID_SERVER_AUTH), der::oid(der::OID_CLIENT_AUTH)].concat());
    extensions.push(der::extension(der::OID_EXT_KEY_USAGE, false, &server_and_client));
    let basic = der::seq(&if template.is_ca { der::boolean(true) } else { Vec::new() });
    extensions.push(der::extension(der::OID_BASIC_CONSTRAINTS, true, &basic));
    if template.is_ca {
        let bits = der::subject_public_key_bits(&spki).unwrap_or_default();
        extensions.push(der::extension(der::OID_SUBJECT_KEY_ID, false, &der::octet_string(&super::strings::sha1(&bits))));
    }
    if let Some(id) = authority_key_id {
        extensions.push(der::extension(der::OID_AUTHORITY_KEY_ID, false, &der::seq(&der::tlv(0x80, &id))));
    }
    if !template.dns_names.is_empty() || !template.ips.is_empty() {
        let mut names = Vec::new();
        for name in &template.dns_names {
            names.extend(der::tlv(0x82, name.as_bytes()));
        }
        for ip in &template.ips {
            names.extend(der::tlv(0x87, ip));
        }
        extensions.push(der::extension(der::OID_SUBJECT_ALT_NAME, false, &der::seq(&names)));
    }

    let algorithm = der::seq(&[der::oid(der::OID_SHA256_WITH_RSA), vec![0x05, 0x00]].concat());
    let tbs = der::seq(
        &[
            der::tlv(0xa0, &der::integer(&[2])),
            der::integer(&serial),
            algorithm.clone(),
            issuer,
            der::seq(&[der::time(now), der::time(not_after)].concat()),
            subject,
            spki,
            der::tlv(0xa3, &der::seq(&extensions.concat())),
        ]
        .concat(),
    );
    let digest = sha2::Sha256::digest(&tbs);
    let signature = signing_key
        .sign(Pkcs1v15Sign::new_unprefixed(), &[der::SHA256_DIGEST_INFO_PREFIX, digest.as_slice()].concat())
        .map_err(|e| FnError::from(format!("error creating certificate: {e}")))?;
    let certificate = der::seq(&[tbs, algorithm, der::bit_string(&signature, 0)].concat());
    Ok(Value::Object(Rc::new(Certificate { cert: pem("CERTIFICATE", &certificate), key: key_pem(&key) })))
}

/// The parts of a parsed certificate that issuing needs.
struct ParsedCertificate {
    subject_der: Vec<u8>,
    subject_key_id: Option<Vec<u8>>,
}

fn parse_certificate(data: &[u8]) -> Result<ParsedCertificate, MalformedCertificate> {
    let malformed = || MalformedCertificate;
    let (tag, cert, _) = der::read(data).ok_or_else(malformed)?;
    if tag != 0x30 {
        return Err(malformed());
    }
    let (tag, tbs, _) = der::read(cert).ok_or_else(malformed)?;
    if tag != 0x30 {
        return Err(malformed());
    }
    let mut rest = tbs;
    let mut fields = Vec::new();
    while !rest.is_empty() {
        let (tag, _, next) = der::read(rest).ok_or_else(malformed)?;
        fields.push((tag, &rest[..rest.len() - next.len()]));
        rest = next;
    }
    // version [0] is optional; then serial, algorithm, issuer, validity, subject, key, …
    let offset = usize::from(fields.first().map(|f| f.0) == Some(0xa0));
    let subject = fields.get(offset + 4).ok_or_else(malformed)?.1.to_vec();
    let mut subject_key_id = None;
    if let Some((_, ext_field)) = fields.iter().find(|f| f.0 == 0xa3) {
        let (_, inner, _) = der::read(ext_field).ok_or_else(malformed)?;
        let (_, mut list, _) = der::read(inner).ok_or_else(malformed)?;
        while !list.is_empty() {
            let (_, ext, next) = der::read(list).ok_or_else(malformed)?;
            list = next;
            let (_, oid, after_oid) = der::read(ext).ok_or_else(malformed)?;
            if oid == der::OID_SUBJECT_KEY_ID {
                // extnID, optional critical BOOLEAN, then the OCTET STRING wrapping the key identifier.
                let (tag, value, after) = der::read(after_oid).ok_or_else(malformed)?;
                let value = if tag == 0x01 { der::read(after).ok_or_else(malformed)?.1 } else { value };
                subject_key_id = Some(der::read(value).ok_or_else(malformed)?.1.to_vec());
            }
        }
    }
    Ok(ParsedCertificate { subject_der: subject, subject_key_id })
}

/// The few DER shapes an X.509 certificate needs.
mod der {
    pub const OID_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x0f];
    pub const OID_EXT_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25];
    pub const OID_BASIC_CONSTRAINTS: &[u8] = &[0x55, 0x1d, 0x13];
    pub const OID_SUBJECT_KEY_ID: &[u8] = &[0x55, 0x1d, 0x0e];
    pub const OID_AUTHORITY_KEY_ID: &[u8] = &[0x55, 0x1d, 0x23];
    pub const OID_SUBJECT_ALT_NAME: &[u8] = &[0x55, 0x1d, 0x11];
    pub const OID_COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
    pub const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
    pub const OID_PRIME256V1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    pub const OID_SERVER_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01];
    pub const OID_CLIENT_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x02];
    pub const OID_SHA256_WITH_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b];
    /// DigestInfo header for a SHA-256 digest (RFC 8017 §9.2 note 1).
    pub const SHA256_DIGEST_INFO_PREFIX: &[u8] =
        &[0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20];

    pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        let n = content.len();
        if n < 0x80 {
            out.push(n as u8);
        } else {
            let bytes: Vec<u8> = n.to_be_bytes().into_iter().skip_while(|&b| b == 0).collect();
            out.push(0x80 | bytes.len() as u8);
            out.extend(bytes);
        }
        out.extend_from_slice(content);
        out
    }

    /// (tag, content, rest) of the element at the start of `data`.
    pub fn read(data: &[u8]) -> Option<(u8, &[u8], &[u8])> {
        let (&tag, rest) = data.split_first()?;
        let (&first, mut rest) = rest.split_first()?;
        let len = if first < 0x80 {
            first as usize
        } else {
            let count = (first & 0x7f) as usize;
            if count == 0 || count > 4 || rest.len() < count {
                return None;
            }
            let n = rest[..count].iter().fold(0usize, |acc, &b| (acc << 8) | b as usize);
            rest = &rest[count..];
            n
        };
        (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
    }

    pub fn seq(content: &[u8]) -> Vec<u8> {
        tlv(0x30, content)
    }

    pub fn oid(encoded: &[u8]) -> Vec<u8> {
        tlv(0x06, encoded)
    }

    pub fn boolean(value: bool) -> Vec<u8> {
        tlv(0x01, &[if value { 0xff } else { 0x00 }])
    }

    pub fn octet_string(content: &[u8]) -> Vec<u8> {
        tlv(0x04, content)
    }

    pub fn bit_string(content: &[u8], unused_bits: u8) -> Vec<u8> {
        tlv(0x03, &[&[unused_bits], content].concat())
    }

    /// A non-negative INTEGER from big-endian magnitude bytes, minimally encoded.
    pub fn integer(magnitude: &[u8]) -> Vec<u8> {
        let trimmed: Vec<u8> = magnitude.iter().copied().skip_while(|&b| b == 0).collect();
        let mut content = if trimmed.is_empty() { vec![0] } else { trimmed };
        if content[0] & 0x80 != 0 {
            content.insert(0, 0);
        }
        tlv(0x02, &content)
    }

    pub fn extension(oid_bytes: &[u8], critical: bool, value: &[u8]) -> Vec<u8> {
        let mut content = oid(oid_bytes);
        if critical {
            content.extend(boolean(true));
        }
        content.extend(octet_string(value));
        seq(&content)
    }

    /// `CN=<cn>` as Go's pkix.Name writes it: PrintableString when it can, UTF8String otherwise;
    /// an empty name is an empty sequence.
    pub fn name(common_name: &str) -> Vec<u8> {
        if common_name.is_empty() {
            return seq(&[]);
        }
        let printable = common_name.bytes().all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?*&".contains(&b));
        let value = tlv(if printable { 0x13 } else { 0x0c }, common_name.as_bytes());
        seq(&tlv(0x31, &seq(&[oid(OID_COMMON_NAME), value].concat())))
    }

    /// UTCTime before 2050, GeneralizedTime after, as RFC 5280 and Go require.
    pub fn time(unix_seconds: i64) -> Vec<u8> {
        let (y, mo, d, h, mi, s) = civil(unix_seconds);
        if (1950..2050).contains(&y) {
            tlv(0x17, format!("{:02}{mo:02}{d:02}{h:02}{mi:02}{s:02}Z", y % 100).as_bytes())
        } else {
            tlv(0x18, format!("{y:04}{mo:02}{d:02}{h:02}{mi:02}{s:02}Z").as_bytes())
        }
    }

    fn civil(unix_seconds: i64) -> (i64, u32, u32, u32, u32, u32) {
        let days = unix_seconds.div_euclid(86_400);
        let secs = unix_seconds.rem_euclid(86_400);
        // Howard Hinnant's days-to-civil algorithm.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        (year, month, day, (secs / 3600) as u32, (secs / 60 % 60) as u32, (secs % 60) as u32)
    }

    /// The subjectPublicKey bits inside a SubjectPublicKeyInfo.
    pub fn subject_public_key_bits(spki: &[u8]) -> Option<Vec<u8>> {
        let (_, info, _) = read(spki)?;
        let (_, _, rest) = read(info)?;
        let (_, bits, _) = read(rest)?;
        Some(bits.get(1..)?.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_switch_to_generalized_in_2050() {
        assert_eq!(der::time(0), der::tlv(0x17, b"700101000000Z"));
        assert_eq!(der::time(2_524_608_000), der::tlv(0x18, b"20500101000000Z"));
    }
}
