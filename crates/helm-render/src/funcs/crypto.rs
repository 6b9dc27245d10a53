//! Sprig's secret-handling functions: `bcrypt`, `htpasswd`, `derivePassword` (the Master Password
//! algorithm), `encryptAES` and `decryptAES`. Salts and IVs come from the operating system's
//! CSPRNG, because templates use these to mint real credentials.

use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use base64::Engine;
use hmac::Mac;

use super::strings::{int, s};
use gotmpl::{FnError, FuncMap, Param, Value};

type R = Result<Value, FnError>;

/// golang.org/x/crypto/bcrypt's DefaultCost.
const BCRYPT_COST: u32 = 10;
/// bcrypt only reads 72 bytes; Go refuses longer passwords rather than truncating them.
const BCRYPT_MAX_PASSWORD: usize = 72;
pub(super) fn add(map: &mut FuncMap) {
    use Param::{Int, Str};
    map.add("bcrypt", &[Str], None, |_, a| Ok(Value::string(bcrypt(s(&a[0])))));
    map.add("htpasswd", &[Str, Str], None, |_, a| {
        let user = s(&a[0]);
        if user.contains(':') {
            // Sprig returns this as the function's output, not as an error.
            return Ok(Value::string(format!("invalid username: {user}")));
        }
        Ok(Value::string(format!("{user}:{}", bcrypt(s(&a[1])))))
    });
    map.add("derivePassword", &[Int, Str, Str, Str, Str], None, |_, a| {
        derive_password(int(&a[0]) as u32, s(&a[1]), s(&a[2]), s(&a[3]), s(&a[4]))
    });
    map.add("encryptAES", &[Str, Str], None, |_, a| encrypt_aes(s(&a[0]), s(&a[1])).map(Value::string));
    map.add("decryptAES", &[Str, Str], None, |_, a| decrypt_aes(s(&a[0]), s(&a[1])).map(Value::string));
}

pub(super) fn secure_random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if getrandom::getrandom(&mut bytes).is_err() {
        // No OS entropy source (extremely unusual): fall back to the template RNG rather than fail a render.
        for b in bytes.iter_mut() {
            *b = super::random::random_u64() as u8;
        }
    }
    bytes
}

/// `$2a$10$…` like Go's bcrypt; errors become the function's output, as in Sprig.
fn bcrypt(password: &str) -> String {
    if password.len() > BCRYPT_MAX_PASSWORD {
        return "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes".to_string();
    }
    match bcrypt::hash_with_salt(password.as_bytes(), BCRYPT_COST, secure_random::<16>()) {
        Ok(parts) => parts.format_for_version(bcrypt::Version::TwoA),
        Err(err) => format!("failed to encrypt string with bcrypt: {err}"),
    }
}

/// Master Password v3 templates per password type, and the characters each template letter draws from.
fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn template_characters(letter: u8) -> &'static [u8] {
    match letter {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

const MASTER_PASSWORD_SCOPE: &[u8] = b"com.lyndir.masterpassword";

fn scoped(name: &str) -> Vec<u8> {
    let mut out = MASTER_PASSWORD_SCOPE.to_vec();
    out.extend_from_slice(&(name.len() as u32).to_be_bytes());
    out.extend_from_slice(name.as_bytes());
    out
}

fn derive_password(counter: u32, kind: &str, master: &str, user: &str, site: &str) -> R {
    let Some(templates) = password_templates(kind) else {
        return Ok(Value::string(format!("cannot find password template {kind}")));
    };
    // scrypt with N=2^15, r=8 touches 32 MiB per call: bounded per render like other runaway work.
    gotmpl::exec::charge_expensive_call("derivePassword", 1)?;
    let params = scrypt::Params::new(15, 8, 2, 64).expect("N=2^15, r=8, p=2 are valid scrypt parameters");
    let mut key = [0u8; 64];
    scrypt::scrypt(master.as_bytes(), &scoped(user), &params, &mut key).expect("64 is a valid scrypt output length");

    let mut message = scoped(site);
    message.extend_from_slice(&counter.to_be_bytes());
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).expect("HMAC takes keys of any length");
    mac.update(&message);
    let seed = mac.finalize().into_bytes();

    let template = templates[seed[0] as usize % templates.len()].as_bytes();
    let password: String = template
        .iter()
        .enumerate()
        .map(|(i, &letter)| {
            let chars = template_characters(letter);
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect();
    Ok(Value::string(password))
}

/// Sprig zero-pads (or cuts) the password to a 32-byte AES-256 key.
fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let n = password.len().min(32);
    key[..n].copy_from_slice(&password.as_bytes()[..n]);
    key
}

const AES_BLOCK: usize = 16;

/// AES-256-CBC with PKCS#7 padding and a random IV in front, base64-encoded.
fn encrypt_aes(password: &str, plaintext: &str) -> Result<String, FnError> {
    if plaintext.is_empty() {
        return Ok(String::new());
    }
    let iv = secure_random::<AES_BLOCK>();
    let mut content = plaintext.as_bytes().to_vec();
    let padding = AES_BLOCK - content.len() % AES_BLOCK;
    content.extend(std::iter::repeat_n(padding as u8, padding));
    let mut encryptor = cbc::Encryptor::<aes::Aes256>::new(&aes_key(password).into(), &iv.into());
    for block in content.chunks_exact_mut(AES_BLOCK) {
        encryptor.encrypt_block_mut(block.into());
    }
    let mut out = iv.to_vec();
    out.extend_from_slice(&content);
    Ok(base64::engine::general_purpose::STANDARD.encode(out))
}

/// The inverse of `encrypt_aes`. Like Sprig, the padding is trusted (a wrong key yields garbage,
/// not an error); inputs Go would panic on are reported as errors with Go's panic text.
fn decrypt_aes(password: &str, encoded: &str) -> Result<String, FnError> {
    if encoded.is_empty() {
        return Ok(String::new());
    }
    let crypt = base64::engine::general_purpose::STANDARD.decode(encoded).map_err(|_| FnError::from(base64_error(encoded)))?;
    if crypt.len() < AES_BLOCK {
        return Err(format!("runtime error: slice bounds out of range [:16] with capacity {}", crypt.len()).into());
    }
    let (iv, body) = crypt.split_at(AES_BLOCK);
    if body.len() % AES_BLOCK != 0 {
        return Err("crypto/cipher: input not full blocks".into());
    }
    if body.is_empty() {
        return Err("runtime error: index out of range [-1]".into());
    }
    let mut plain = body.to_vec();
    let mut decryptor = cbc::Decryptor::<aes::Aes256>::new(&aes_key(password).into(), iv.into());
    for block in plain.chunks_exact_mut(AES_BLOCK) {
        decryptor.decrypt_block_mut(block.into());
    }
    let pad = *plain.last().unwrap_or(&0) as usize;
    if pad > plain.len() {
        return Err(format!("runtime error: slice bounds out of range [:{}]", plain.len() as isize - pad as isize).into());
    }
    plain.truncate(plain.len() - pad);
    Ok(String::from_utf8_lossy(&plain).into_owned())
}

/// Go's `base64.CorruptInputError` message: the offset of the first byte that cannot be decoded.
fn base64_error(input: &str) -> String {
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let bytes = input.as_bytes();
    let mut offset = bytes.iter().position(|&b| !alphabet(b) && b != b'=' && b != b'\r' && b != b'\n').unwrap_or(bytes.len());
    if offset == bytes.len() {
        // Only padding or length is wrong: Go reports where the incomplete quantum starts.
        let data = bytes.iter().filter(|&&b| alphabet(b)).count();
        offset = data - data % 4;
    }
    format!("illegal base64 data at input byte {offset}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use gotmpl::exec::{charge_expensive_call, Budget, BudgetError, Limits, MAX_EXPENSIVE_UNITS};

    #[test]
    fn expensive_work_is_bounded_per_render_and_reset_by_the_next() {
        let _ = Budget::new(Limits::default());
        assert!(charge_expensive_call("x", MAX_EXPENSIVE_UNITS).is_ok());
        let refused = charge_expensive_call("derivePassword", 1).unwrap_err();
        assert_eq!(refused, BudgetError::ExpensiveWork { what: "derivePassword" });
        assert!(refused.to_string().starts_with("derivePassword: "), "{refused}");
        let _ = Budget::new(Limits::default());
        assert!(charge_expensive_call("x", 1).is_ok());
    }

    #[test]
    fn aes_round_trips_and_pads_to_whole_blocks() {
        for plain in ["a", "exactly16bytes!!", "ünïcödé and a longer text than one block"] {
            let sealed = encrypt_aes("key", plain).unwrap();
            let raw = base64::engine::general_purpose::STANDARD.decode(&sealed).unwrap();
            assert_eq!(raw.len(), AES_BLOCK + (plain.len() / AES_BLOCK + 1) * AES_BLOCK);
            assert_eq!(decrypt_aes("key", &sealed).unwrap(), plain);
        }
        assert_eq!(base64_error("ab%"), "illegal base64 data at input byte 2");
    }
}
