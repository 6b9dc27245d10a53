//! One page of a list, read straight from the response bytes: each item is completed
//! (apiVersion and kind, which list items may omit) and normalised as soon as it is parsed, so
//! neither the page's text nor its whole tree is kept, and each item's maps and arrays are
//! allocated once at their final size (serde_json's own `Value` grows them entry by entry,
//! which left a fifth of the memory of 50,000 TrainJobs unused).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};

use crate::cluster::catalog::Resource;
use crate::cluster::trim::{Shape, CONDITIONS, MANAGERS};
use crate::cluster::{prune, Prune};

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
        while let Some(mut item) = seq.next_element_seed(Item(&mut *self.scratch))? {
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

/// One list item, built without what normalisation drops: once the item's `kind` is read (the
/// API server writes it before `metadata`, `spec` and `status`), each later key is built as
/// [`crate::cluster::prune`] says; an item whose kind comes later, or never (built-in lists
/// leave it out), is built whole.
struct Item<'a>(&'a mut Scratch);

impl<'de> DeserializeSeed<'de> for Item<'_> {
    type Value = Json;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Item<'_> {
    type Value = Json;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a Kubernetes object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let start = self.0.entries.len();
        let mut kind: Option<String> = None;
        while let Some(key) = map.next_key::<String>()? {
            let value = match kind.as_deref().map_or(Prune::Keep, |k| prune(k, &key)) {
                Prune::Keep => map.next_value_seed(Compact(&mut *self.0))?,
                Prune::Drop => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
                Prune::Conditions => map.next_value_seed(Shaped(&mut *self.0, &CONDITIONS))?,
                Prune::Managers => map.next_value_seed(Shaped(&mut *self.0, &MANAGERS))?,
            };
            if let ("kind", Json::String(k)) = (key.as_str(), &value) {
                kind = Some(k.clone()).filter(|k| !k.is_empty());
            }
            self.0.entries.push((key, value));
        }
        let mut object = Map::with_capacity(self.0.entries.len() - start);
        object.extend(self.0.entries.drain(start..));
        Ok(Json::Object(object))
    }
    // Anything but an object is built as it is.
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Json, E> {
        Compact(self.0).visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Json, E> {
        Compact(self.0).visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Json, E> {
        Compact(self.0).visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        Compact(self.0).visit_f64(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Json, E> {
        Compact(self.0).visit_str(v)
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Json, E> {
        Compact(self.0).visit_string(v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Json, E> {
        Compact(self.0).visit_unit()
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Json, E> {
        Compact(self.0).visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Json, A::Error> {
        Compact(self.0).visit_seq(seq)
    }
}

/// A value built in a [`Shape`]: the keys and elements the shape leaves out are read past.
struct Shaped<'a>(&'a mut Scratch, &'static Shape);

impl<'de> DeserializeSeed<'de> for Shaped<'_> {
    type Value = Json;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        match self.1 {
            Shape::Whole => d.deserialize_any(Compact(self.0)),
            _ => d.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Shaped<'_> {
    type Value = Json;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let (only, keys): (bool, &[(&str, Shape)]) = match self.1 {
            Shape::Only(keys) => (true, keys),
            Shape::Except(keys) => (false, keys),
            _ => return Compact(self.0).visit_map(map),
        };
        let start = self.0.entries.len();
        while let Some(key) = map.next_key::<String>()? {
            let value = match keys.iter().find(|(k, _)| *k == key) {
                Some((_, sub)) => map.next_value_seed(Shaped(&mut *self.0, sub))?,
                None if only => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
                None => map.next_value_seed(Compact(&mut *self.0))?,
            };
            self.0.entries.push((key, value));
        }
        let mut object = Map::with_capacity(self.0.entries.len() - start);
        object.extend(self.0.entries.drain(start..));
        Ok(Json::Object(object))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let Shape::Each(sub) = self.1 else { return Compact(self.0).visit_seq(seq) };
        let start = self.0.values.len();
        while let Some(value) = seq.next_element_seed(Shaped(&mut *self.0, sub))? {
            self.0.values.push(value);
        }
        Ok(Json::Array(self.0.values.drain(start..).collect()))
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Json, E> {
        Compact(self.0).visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Json, E> {
        Compact(self.0).visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Json, E> {
        Compact(self.0).visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
        Compact(self.0).visit_f64(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Json, E> {
        Compact(self.0).visit_str(v)
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Json, E> {
        Compact(self.0).visit_string(v)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Json, E> {
        Compact(self.0).visit_unit()
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<Json, E> {
        Compact(self.0).visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        d.deserialize_any(self)
    }
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
    }

    /// Items built without what normalisation drops (statuses, legacy specs, managedFields
    /// bodies, objects it never keeps) normalise to what the whole items normalise to, whatever
    /// the order of their keys and the shape of what is left out.
    #[test]
    fn items_pruned_while_parsed_normalise_as_whole_ones() {
        let items = [
            r#"{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"a","namespace":"n","managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}},"time":"t"},"odd"]},"spec":{"x":1},"status":{"conditions":[{"type":"Complete","status":"True","reason":"r","message":"m"},"odd",{"status":"False"}],"jobsStatus":[{"name":"node"}]}}"#,
            r#"{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"b","namespace":"n"},"status":{"conditions":{"type":"x"}}}"#,
            r#"{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"c","namespace":"n"},"status":"odd","status":{"conditions":[{"type":"Failed","status":"True"}]}}"#,
            r#"{"metadata":{"name":"d","namespace":"n"},"status":{"conditions":[{"type":"Complete","status":"True","reason":"r"}]},"kind":"TrainJob"}"#,
            r#"{"apiVersion":"kubeflow.org/v1","kind":"TFJob","metadata":{"name":"e","namespace":"n"},"spec":{"tfReplicaSpecs":{"Worker":{"replicas":2}}},"status":{"conditions":[{"type":"Running","status":"True","lastTransitionTime":"t"}]}}"#,
            r#"{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"f","namespace":"n"},"spec":{"pytorchReplicaSpecs":{}},"status":{}}"#,
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"g","namespace":"n"},"spec":{"containers":[]}}"#,
            r#"{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime","metadata":{"name":"h"},"spec":{"mlPolicy":{}},"status":{"x":[1,2]}}"#,
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"i","labels":{"a":"b"},"uid":"u"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}"#,
            r#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sh.helm.release.v1.x.v1","namespace":"n","managedFields":[{"manager":"helm","fieldsV1":{}}]},"type":"Opaque"}"#,
        ];
        let r = crate::cluster::catalog::RESOURCES.iter().find(|r| r.kind == "TrainJob").expect("TrainJob in the catalog");
        let body = format!(r#"{{"metadata":{{}},"items":[{}]}}"#, items.join(","));
        let page = Page::parse(body.as_bytes(), r).expect("page parses");
        let want: Vec<Json> = serde_json::from_str::<Json>(&body).expect("reference")["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|item| {
                let mut item = item.clone();
                item["apiVersion"] = item.get("apiVersion").cloned().unwrap_or_else(|| r.api_version().into());
                crate::cluster::normalise(item)
            })
            .collect();
        assert_eq!(page.items, want);
        assert_eq!(page.items.len(), 8, "the Pod and the other chart's Secret are not kept");
        assert!(Page::parse(br#"{"items":[1]} x"#, r).is_err());
    }
}
