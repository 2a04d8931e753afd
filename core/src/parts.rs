//! The items of an answer given apart by its handler ([`crate::context::Call::part`]),
//! encoded and disclosed by the executor while the handler reads on: part of the disclosure
//! choke point of [`crate::execute`], in a module of its own because the call carries it.

use serde_json::Value;

use crate::registry::Descriptor;
use seneschal_access::error::CapabilityError;
use seneschal_access::redact::redact_value;
use seneschal_model::policy::Disclosure;

/// The items of one array of an answer that its handler gives one by one as it reads them
/// ([`crate::context::Call::part`]), while its source goes on (`repo.log`'s commits while git writes the
/// next): each is encoded as it comes, and the disclosure choke point's [`redact_value`]
/// passes them in batches of [`Parts::BATCH`] meanwhile, every item of a `repository`
/// answer (the function redacts each string by itself, so a batch answers as the whole
/// answer does: `parts_answer_as_the_whole_answer`). `Parts::settle` puts them in the
/// answer after the executor's disclosure passed the rest, in the array the handler left
/// empty, and answers how many secrets they held (the executor adds them to the answer's
/// `redactions`). The answer a transport gets is the same as when the
/// handler returns every item in its `Output`; the work moves into the handler's reading.
pub struct Parts {
    /// The transport's early rendering of the items, given each batch once it is disclosed.
    rendition: Option<std::sync::Arc<dyn Rendition>>,
    /// Whether the items pass [`redact_value`]: those of a `repository` answer (the executor
    /// says which before the handler runs; until then, every item does).
    redacts: bool,
    /// The array the items belong in, once one was given.
    field: Option<&'static str>,
    items: Vec<Value>,
    /// How many of `items` were disclosed already, and how many secrets that replaced.
    disclosed: usize,
    redactions: usize,
    /// Why the items cannot be an answer (an item that does not encode, a second field).
    failed: Option<String>,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            rendition: None,
            redacts: true,
            field: None,
            items: Vec::new(),
            disclosed: 0,
            redactions: 0,
            failed: None,
        }
    }
}

impl Parts {
    /// The items of an answer of `disclosure`.
    pub fn of(disclosure: Disclosure) -> Self {
        Parts {
            redacts: disclosure == Disclosure::Repository,
            ..Parts::default()
        }
    }

    /// The items, also given to `rendition` as they are disclosed.
    pub fn rendered_by(self, rendition: Option<std::sync::Arc<dyn Rendition>>) -> Self {
        Parts { rendition, ..self }
    }

    /// How many items are disclosed together.
    pub const BATCH: usize = 32;

    /// Encodes one item of `field`; discloses the batch it completes.
    pub fn push<T: serde::Serialize>(&mut self, field: &'static str, item: &T) {
        if self.field.is_some_and(|f| f != field) {
            self.failed = Some(format!(
                "items were given for `{field}` after `{}`",
                self.field.unwrap_or_default()
            ));
        }
        self.field = Some(field);
        match serde_json::to_value(item) {
            Ok(v) => self.items.push(v),
            Err(e) => self.failed = Some(format!("an item of `{field}` does not encode: {e}")),
        }
        if (self.redacts || self.rendition.is_some())
            && self.items.len() - self.disclosed >= Self::BATCH
        {
            self.disclose();
        }
    }

    /// Passes the items not yet disclosed through [`redact_value`] (those of a `repository`
    /// answer), then gives them to the rendition: what it gets is what the answer holds.
    fn disclose(&mut self) {
        if self.redacts {
            let mut batch = Value::Array(self.items.split_off(self.disclosed));
            self.redactions += redact_value(&mut batch);
            if let Value::Array(items) = batch {
                self.items.extend(items);
            }
        }
        if let (Some(r), Some(field)) = (&self.rendition, self.field) {
            r.disclosed(field, &self.items[self.disclosed..]);
        }
        self.disclosed = self.items.len();
    }

    /// The answer `output` of `d` (already through the executor's disclosure) with the items
    /// in their array, which must be one the answer holds empty, and how many secrets the
    /// items held.
    pub(crate) fn settle(
        mut self,
        d: &Descriptor,
        mut output: Value,
    ) -> Result<(Value, usize), CapabilityError> {
        let Some(field) = self.field else {
            return Ok((output, 0));
        };
        let wrong = |why: String| CapabilityError::internal(format!("`{}` {why}", d.id));
        if let Some(why) = self.failed.take() {
            return Err(wrong(why));
        }
        self.disclose();
        match output.get_mut(field) {
            Some(Value::Array(held)) if held.is_empty() => *held = self.items,
            _ => {
                let why = format!("gave items of `{field}` apart, and its answer holds no empty");
                return Err(wrong(format!("{why} `{field}` for them")));
            }
        }
        Ok((output, self.redactions))
    }
}

/// A transport's rendering of an answer's items made while its handler reads on: given every
/// item [`Parts`] puts in the answer, in order, each batch once it passed the disclosure (so
/// it renders nothing the answer does not hold). MCP writes a table's rows and their JSON
/// here, and uses them only when the answer's array holds exactly the items it was given.
pub trait Rendition: Send + Sync {
    /// The next `items` of the answer's array `field`, disclosed.
    fn disclosed(&self, field: &'static str, items: &[Value]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn descriptor(id: &str) -> &'static Descriptor {
        crate::registry::find(id).expect("a registered id").1
    }

    /// Items of a `repository` answer given one by one are redacted as the whole answer is:
    /// every batch disclosed while the handler goes on, the last one at the end, object keys
    /// included, and the count is the whole answer's.
    #[test]
    fn parts_answer_as_the_whole_answer() {
        let secret = |i: usize| format!("password=hunter2-{i}-x");
        let items: Vec<Value> = (0..Parts::BATCH * 2 + 5)
            .map(|i| match i % 9 {
                0 => json!({"subject": secret(i), "n": i}),
                4 => json!({secret(i): "a key of the repository", "n": i}),
                _ => json!({"subject": format!("step {i}"), "n": i}),
            })
            .collect();
        let mut whole = json!({"commits": items.clone(), "truncated": false});
        let n = redact_value(&mut whole);
        assert!(n > 2 * 2, "the sample holds secrets in every batch: {n}");
        let d = descriptor("repo.log");
        let mut parts = Parts::of(Disclosure::Repository);
        for item in &items {
            parts.push("commits", item);
        }
        let (given, m) = parts
            .settle(d, json!({"commits": [], "truncated": false}))
            .unwrap();
        assert_eq!((&given, m), (&whole, n));
        assert!(!given.to_string().contains("hunter2"), "{given}");
        // Items of an answer the disclosure does not pass stay as they were given.
        let mut parts = Parts::of(Disclosure::None);
        for item in &items {
            parts.push("commits", item);
        }
        let (given, m) = parts.settle(d, json!({"commits": []})).unwrap();
        assert_eq!((given["commits"].clone(), m), (Value::Array(items), 0));
    }

    /// A rendition is given every item the answer holds, in order, and each only after the
    /// disclosure passed it: it never sees a secret the answer does not carry.
    #[test]
    fn a_rendition_sees_only_disclosed_items() {
        #[derive(Default)]
        struct Seen(std::sync::Mutex<Vec<Value>>);
        impl Rendition for Seen {
            fn disclosed(&self, field: &'static str, items: &[Value]) {
                assert_eq!(field, "commits");
                self.0.lock().unwrap().extend_from_slice(items);
            }
        }
        let items: Vec<Value> = (0..Parts::BATCH * 2 + 5)
            .map(|i| json!({"subject": format!("password=hunter2-{i}-x"), "n": i}))
            .collect();
        let seen = std::sync::Arc::new(Seen::default());
        let mut parts = Parts::of(Disclosure::Repository)
            .rendered_by(Some(
                std::sync::Arc::clone(&seen) as std::sync::Arc<dyn Rendition>
            ));
        for item in &items {
            parts.push("commits", item);
        }
        let (given, n) = parts
            .settle(descriptor("repo.log"), json!({"commits": []}))
            .unwrap();
        assert_eq!(n, items.len());
        let seen = Value::Array(seen.0.lock().unwrap().clone());
        assert_eq!(seen, given["commits"]);
        assert!(!seen.to_string().contains("hunter2"), "{seen}");
    }

    /// The items go only into the array they were given for, which the answer must hold
    /// empty: a handler that fills it too, lacks it, or gives items of two arrays fails
    /// `internal`, never an answer with items lost or twice.
    #[test]
    fn parts_go_only_into_an_empty_array_of_the_answer() {
        let d = descriptor("repo.log");
        let given = |answer: Value, fields: &[&'static str]| {
            let mut parts = Parts::of(Disclosure::Repository);
            for f in fields {
                parts.push(f, &json!({"subject": "one"}));
            }
            parts.settle(d, answer).map(|(answer, _)| answer)
        };
        let ok = given(json!({"commits": [], "truncated": false}), &["commits"]).unwrap();
        assert_eq!(
            ok,
            json!({"commits": [{"subject": "one"}], "truncated": false})
        );
        for (answer, fields) in [
            (json!({"commits": [{"subject": "zero"}]}), &["commits"][..]),
            (json!({"truncated": false}), &["commits"][..]),
            (json!({"commits": "none"}), &["commits"][..]),
            (json!({"commits": []}), &["commits", "files"][..]),
        ] {
            let e = given(answer.clone(), fields).unwrap_err();
            assert_eq!(
                e.code,
                seneschal_access::error::ErrorCode::Internal,
                "{answer}"
            );
        }
        // No item given: the answer as it is.
        assert_eq!(
            given(json!({"commits": []}), &[]).unwrap(),
            json!({"commits": []})
        );
    }
}
