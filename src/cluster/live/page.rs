//! One page of a list, read straight from the response bytes: each item is completed
//! (apiVersion and kind, which list items may omit) and normalised as soon as it is parsed, so
//! neither the page's text nor its whole tree is kept, and each item's maps and arrays are
//! allocated once at their final size (serde_json's own `Value` grows them entry by entry,
//! which left a fifth of the memory of 50,000 TrainJobs unused).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};

use crate::cluster::catalog::Resource;

pub(super) struct Page {
    pub items: Vec<Json>,
    pub continue_token: Option<String>,
}

impl Page {
    pub fn parse(body: &[u8], r: &Resource) -> Result<Page, serde_json::Error> {
        let mut page = Page { items: Vec::new(), continue_token: None };
        let mut de = serde_json::Deserializer::from_slice(body);
        de.deserialize_map(PageVisitor { page: &mut page, resource: r, scratch: &mut Scratch::default() })?;
        de.end()?;
        Ok(page)
    }
}

struct PageVisitor<'a> {
    page: &'a mut Page,
    resource: &'a Resource,
    scratch: &'a mut Scratch,
}

impl<'de> Visitor<'de> for PageVisitor<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Kubernetes list")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        #[derive(serde::Deserialize)]
        struct ListMeta {
            #[serde(rename = "continue")]
            continue_token: Option<String>,
        }
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            match key.as_ref() {
                "items" => map.next_value_seed(Items { page: &mut *self.page, resource: self.resource, scratch: &mut *self.scratch })?,
                "metadata" => {
                    let meta: Option<ListMeta> = map.next_value()?;
                    self.page.continue_token = meta.and_then(|m| m.continue_token).filter(|c| !c.is_empty());
                }
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

struct Items<'a> {
    page: &'a mut Page,
    resource: &'a Resource,
    scratch: &'a mut Scratch,
}

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let r = self.resource;
        while let Some(mut item) = seq.next_element_seed(Compact(&mut *self.scratch))? {
            if let Some(obj) = item.as_object_mut() {
                obj.entry("apiVersion").or_insert_with(|| Json::String(r.api_version()));
                obj.entry("kind").or_insert_with(|| Json::String(r.kind.to_string()));
            }
            if let Some(kept) = crate::cluster::normalise(item) {
                self.page.items.push(kept);
            }
        }
        Ok(())
    }
}

/// The children of the arrays and maps being built, kept on two stacks shared by the whole
/// page, so each collection is allocated once, at its final size.
#[derive(Default)]
struct Scratch {
    values: Vec<Json>,
    entries: Vec<(String, Json)>,
}

/// A JSON value as serde_json's `Value` reads it (the last of duplicate keys wins, NaN is
/// null), built at its final size.
struct Compact<'a>(&'a mut Scratch);

impl<'de> DeserializeSeed<'de> for Compact<'_> {
    type Value = Json;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Compact<'_> {
    type Value = Json;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Json::Null, Json::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let start = self.0.values.len();
        while let Some(value) = seq.next_element_seed(Compact(&mut *self.0))? {
            self.0.values.push(value);
        }
        Ok(Json::Array(self.0.values.drain(start..).collect()))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let start = self.0.entries.len();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Compact(&mut *self.0))?;
            self.0.entries.push((key, value));
        }
        let mut object = Map::with_capacity(self.0.entries.len() - start);
        object.extend(self.0.entries.drain(start..));
        Ok(Json::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_read_as_serde_json_reads_them() {
        let r = crate::cluster::catalog::RESOURCES.iter().find(|r| r.kind == "TrainJob").expect("TrainJob in the catalog");
        let body = br#"{"kind":"TrainJobList","apiVersion":"trainer.kubeflow.org/v1alpha1","metadata":{"continue":"c-1","resourceVersion":"7"},
            "items":[{"metadata":{"name":"a","namespace":"n","labels":{"x":"1","x":"2"}},"spec":{"n":[1,-2,2.5,true,null,"s",{}, []],"deep":{"a":{"b":[{"c":1e300}]}}},
            "status":{"conditions":[{"type":"Complete","status":"True","reason":"r"}]}},
            {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}]}"#;
        let page = Page::parse(body, r).expect("page parses");
        assert_eq!(page.continue_token.as_deref(), Some("c-1"));
        let mut want: Json = serde_json::from_slice::<Json>(body).expect("reference")["items"][0].clone();
        want["apiVersion"] = "trainer.kubeflow.org/v1alpha1".into();
        want["kind"] = "TrainJob".into();
        let want = crate::cluster::normalise(want).expect("kept");
        assert_eq!(page.items, vec![want], "the Pod is not kept; the TrainJob is built as serde_json builds it");
        assert!(
            Page::parse(br#"{"items":null,"metadata":{"continue":""}}"#, r).is_ok_and(|p| p.items.is_empty() && p.continue_token.is_none())
        );
        assert!(Page::parse(b"[]", r).is_err());
        assert!(Page::parse(br#"{"items":[1]} x"#, r).is_err());
    }
}
