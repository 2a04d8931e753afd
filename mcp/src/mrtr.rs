//! MCP 2026-07-28 input-required results (SEP-2322): how a request of the stateless era asks
//! its client for input.
//!
//! A modern request cannot wait for the client's answer to a server-to-client request, so a
//! request that needs one is answered `{"resultType":"input_required","inputRequests":{key:
//! {method, params}},"requestState":…}` and the client makes it again carrying
//! `inputResponses` (`{key: result}`) and the `requestState`. Each [`Round`] serves one such
//! request: `seneschal_core::interact::ask` finds the answer to its key among the request's
//! `inputResponses` and the answers the state carries, or records the request under its key
//! (when the client declared the capability it needs). When anything was recorded, the
//! method answers [`Round::input_required`] whatever the call made of the missing answer.
//!
//! Only answers to questions this server asked count: the state lists the keys it asked, and
//! an `inputResponses` entry under any other key — or any entry on a first round, which carries
//! no state — is ignored (and said in the server's log), so a client cannot approve a call by
//! sending an answer nobody asked for.
//!
//! The `requestState` carries every answer gathered so far, so that a request asking `a`, then
//! (with `a` answered) `b`, completes in three rounds without any state on the server. It is
//! bound to the method, the tool or prompt name and the arguments, and sealed with
//! HMAC-SHA256 under a key drawn at start-up: a state that was altered, made by another
//! process, or made for another call is refused with -32602 before anything runs.

use std::sync::{Mutex, OnceLock};

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::model::{RpcError, ServerInfo, META_CLIENT_CAPABILITIES, META_ERROR, META_SERVER_INFO};
use seneschal_access::error::CapabilityError;

use super::model::MISSING_CLIENT_CAPABILITY;

/// The params member carrying the client's answers.
pub const INPUT_RESPONSES: &str = "inputResponses";
/// The params member echoing the state of the previous round.
pub const REQUEST_STATE: &str = "requestState";

/// The longest `requestState` accepted (the answers it carries included).
const MAX_STATE: usize = seneschal_access::limits::MCP_REQUEST_STATE;

/// What a state is bound to: the request it may be echoed with.
#[derive(Debug, Clone, PartialEq)]
struct Binding {
    method: String,
    name: String,
    arguments: String,
}

impl Binding {
    fn new(method: &str, name: &str, arguments: &Value) -> Binding {
        // serde_json's maps are ordered by key, so equal arguments serialize equally.
        let text = serde_json::to_string(arguments).expect("values serialize");
        Binding {
            method: method.to_string(),
            name: name.to_string(),
            arguments: seneschal_access::text::hex(&Sha256::digest(text.as_bytes())),
        }
    }
}

/// The request a round serves, as given: its [`Binding`] is computed (a hash of the
/// arguments) only when a state is verified or sealed, so a request that asks nothing and
/// carries no state pays for neither.
#[derive(Debug)]
struct Request {
    method: String,
    name: String,
    arguments: Value,
}

impl Request {
    fn binding(&self) -> Binding {
        Binding::new(&self.method, &self.name, &self.arguments)
    }
}

/// One round of a modern request that may ask its client for input.
#[derive(Debug)]
pub struct Round {
    request: Request,
    /// The answers available: the state's, then the request's `inputResponses` over them.
    known: Map<String, Value>,
    /// The answers the call used, carried into the next round's state.
    used: Mutex<Map<String, Value>>,
    /// The requests the call could not have answered: `{key: {method, params}}`.
    asked: Mutex<Map<String, Value>>,
    /// The client capabilities the call needed and the client did not declare.
    lacking: Mutex<Map<String, Value>>,
}

impl Round {
    /// The round of the request `method` for the tool or prompt `name` with `arguments`,
    /// whose params are `params`: its `inputResponses` (an object, if present) and its
    /// `requestState` (verified). A state that fails its check is an invalid-params error.
    pub fn open(
        method: &str,
        name: &str,
        arguments: &Value,
        params: &Value,
    ) -> Result<Round, RpcError> {
        let request = Request {
            method: method.to_string(),
            name: name.to_string(),
            arguments: arguments.clone(),
        };
        let (mut known, asked) = match params.get(REQUEST_STATE) {
            None | Some(Value::Null) => (Map::new(), Vec::new()),
            Some(Value::String(state)) => unseal(state, &request.binding()).ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "invalid params: `{REQUEST_STATE}` fails its integrity check (altered, expired with the process that issued it, or issued for another request)"
                ))
                .with_data(json!({"field": REQUEST_STATE}))
            })?,
            Some(_) => {
                return Err(RpcError::invalid_params(format!(
                    "invalid params: `{REQUEST_STATE}` must be a string"
                )))
            }
        };
        match params.get(INPUT_RESPONSES) {
            None => {}
            Some(Value::Object(answers)) => {
                // Each answer is the result of a request: an object, whatever the method.
                if let Some((key, _)) = answers.iter().find(|(_, v)| !v.is_object()) {
                    return Err(RpcError::invalid_params(format!(
                        "invalid params: `{INPUT_RESPONSES}.{key}` must be an object, the result of the request it answers"
                    ))
                    .with_data(json!({"field": INPUT_RESPONSES, "key": key})));
                }
                for (k, v) in answers {
                    if asked.iter().any(|a| a == k) {
                        known.insert(k.clone(), v.clone());
                    } else {
                        eprintln!(
                            "seneschal mcp: `{method}` of `{name}` carries an answer to `{k}`, \
                             which this server did not ask: ignored"
                        );
                    }
                }
            }
            Some(_) => {
                return Err(RpcError::invalid_params(format!(
                    "invalid params: `{INPUT_RESPONSES}` must be an object"
                ))
                .with_data(json!({"field": INPUT_RESPONSES})))
            }
        }
        Ok(Round {
            request,
            known,
            used: Mutex::default(),
            asked: Mutex::default(),
            lacking: Mutex::default(),
        })
    }

    /// Every answer the client gave, now or in an earlier round.
    pub fn answers(&self) -> &Map<String, Value> {
        &self.known
    }

    /// Whether the request continues a round: it carries answers or a state.
    pub fn continues(params: &Value) -> bool {
        params.get(INPUT_RESPONSES).is_some() || params.get(REQUEST_STATE).is_some()
    }

    /// The client's answer to the request `key`, if it gave one (now or in an earlier round).
    pub fn answer(&self, key: &str) -> Option<Value> {
        let v = self.known.get(key)?.clone();
        self.used
            .lock()
            .expect("not poisoned")
            .insert(key.to_string(), v.clone());
        Some(v)
    }

    /// Records the request `method` with `params` under `key`, to travel in the answer.
    pub fn defer(&self, key: &str, method: &str, params: Value) {
        self.asked
            .lock()
            .expect("not poisoned")
            .insert(key.to_string(), crate::link::to_client(method, params));
    }

    /// Notes that the call needed the client capability `name`, which the client did not
    /// declare.
    pub fn lacks(&self, name: &str) {
        self.lacking
            .lock()
            .expect("not poisoned")
            .insert(name.to_string(), json!({}));
    }

    /// The error of a call that failed (with `cause`) after needing a capability the client
    /// did not declare: -32021 naming them in `requiredCapabilities` (a `ClientCapabilities`
    /// object), the call's own error in `data["seneschal/error"]` (its code, and what else
    /// would have served, such as an approval policy).
    pub fn missing_capabilities(&self, cause: &CapabilityError) -> Option<RpcError> {
        let lacking = self.lacking.lock().expect("not poisoned");
        if lacking.is_empty() {
            return None;
        }
        let names: Vec<&str> = lacking.keys().map(String::as_str).collect();
        Some(
            RpcError::new(
                MISSING_CLIENT_CAPABILITY,
                format!(
                    "missing required client capability: the request needs `{}`, which `_meta[\"{META_CLIENT_CAPABILITIES}\"]` does not declare ({})",
                    names.join("`, `"),
                    cause.message
                ),
            )
            .with_data(json!({"requiredCapabilities": *lacking, META_ERROR: cause.to_json()})),
        )
    }

    /// The input-required result of this round, when the call recorded any request: its
    /// bytes, with the modern `_meta` every result carries.
    pub fn input_required(&self) -> Option<String> {
        let asked = self.asked.lock().expect("not poisoned");
        if asked.is_empty() {
            return None;
        }
        let used = self.used.lock().expect("not poisoned");
        let result = json!({
            "resultType": "input_required",
            "inputRequests": *asked,
            "requestState": seal(&self.request.binding(), &used, asked.keys()),
            "_meta": {META_SERVER_INFO: ServerInfo::THIS},
        });
        Some(serde_json::to_string(&result).expect("values serialize"))
    }
}

/// The process's sealing key, drawn once.
fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(seneschal_access::text::random::<32>)
}

/// The state carrying `answers` for a request of `binding`, and the keys of the questions
/// this round asked (the only keys whose answers the next round takes): Base64 of its JSON, a
/// dot, and the hex of its MAC.
fn seal<'k>(
    binding: &Binding,
    answers: &Map<String, Value>,
    asked: impl Iterator<Item = &'k String>,
) -> String {
    let mut asked: Vec<&str> = asked.map(String::as_str).collect();
    asked.extend(answers.keys().map(String::as_str));
    let payload = json!({
        "v": 1,
        "method": binding.method,
        "name": binding.name,
        "arguments": binding.arguments,
        "answers": answers,
        "asked": asked,
    });
    let bytes = serde_json::to_vec(&payload).expect("values serialize");
    format!(
        "{}.{}",
        seneschal_access::text::base64(&bytes),
        seneschal_access::text::hex(&seneschal_access::text::hmac_sha256(key(), &bytes))
    )
}

/// The answers a state carries and the keys it was asked for, when it is one of this
/// process's and was made for `binding`.
fn unseal(state: &str, binding: &Binding) -> Option<(Map<String, Value>, Vec<String>)> {
    if state.len() > MAX_STATE {
        return None;
    }
    let (body, mac) = state.rsplit_once('.')?;
    let bytes = super::wire::header_value(&format!("=?base64?{body}?="))?.into_bytes();
    let expected = seneschal_access::text::hex(&seneschal_access::text::hmac_sha256(key(), &bytes));
    // Compared in full whatever differs first, so that timing tells nothing of the MAC.
    let same = expected.len() == mac.len()
        && expected
            .bytes()
            .zip(mac.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if !same {
        return None;
    }
    let payload: Value = serde_json::from_slice(&bytes).ok()?;
    let made_for = Binding {
        method: payload.get("method")?.as_str()?.to_string(),
        name: payload.get("name")?.as_str()?.to_string(),
        arguments: payload.get("arguments")?.as_str()?.to_string(),
    };
    if payload.get("v") != Some(&json!(1)) || &made_for != binding {
        return None;
    }
    let answers = payload.get("answers")?.as_object()?.clone();
    let asked = payload
        .get("asked")?
        .as_array()?
        .iter()
        .filter_map(|k| k.as_str().map(str::to_string))
        .collect();
    Some((answers, asked))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(params: Value) -> Result<Round, RpcError> {
        Round::open("tools/call", "t", &json!({"x": 1}), &params)
    }

    #[test]
    fn a_state_carries_its_answers_into_the_next_round() {
        let r1 = round(json!({})).unwrap();
        assert_eq!(r1.answer("a"), None);
        r1.defer("a", "elicitation/create", json!({}));
        let out: Value = serde_json::from_str(&r1.input_required().unwrap()).unwrap();
        let r2 = round(json!({"requestState": out["requestState"], "inputResponses": {"a": {"action": "accept"}}}))
            .unwrap();
        assert_eq!(r2.answer("a"), Some(json!({"action": "accept"})));
        assert_eq!(r2.answer("b"), None);
        r2.defer("b", "roots/list", json!({}));
        let out: Value = serde_json::from_str(&r2.input_required().unwrap()).unwrap();
        assert_eq!(out["resultType"], "input_required");
        assert_eq!(out["inputRequests"]["b"]["method"], "roots/list");
        let state = out["requestState"].clone();
        let r3 =
            round(json!({"requestState": state, "inputResponses": {"b": {"roots": []}}})).unwrap();
        assert_eq!(r3.answer("a"), Some(json!({"action": "accept"})));
        assert_eq!(r3.answer("b"), Some(json!({"roots": []})));
        assert!(r3.input_required().is_none());
    }

    #[test]
    fn only_answers_to_questions_asked_count() {
        // A first round carries no state: whatever it answers, nobody asked.
        let r = round(json!({"inputResponses": {"approval": {"action": "accept"}}})).unwrap();
        assert_eq!(r.answer("approval"), None);
        // A later round takes the answer to what was asked, not to another key.
        r.defer("roots", "roots/list", json!({}));
        let out: Value = serde_json::from_str(&r.input_required().unwrap()).unwrap();
        let next = round(json!({
            "requestState": out["requestState"],
            "inputResponses": {"roots": {"roots": []}, "approval": {"action": "accept"}},
        }))
        .unwrap();
        assert_eq!(next.answer("roots"), Some(json!({"roots": []})));
        assert_eq!(next.answer("approval"), None);
    }

    #[test]
    fn altered_or_foreign_states_are_refused() {
        let r = round(json!({})).unwrap();
        r.defer("k", "elicitation/create", json!({}));
        let out: Value = serde_json::from_str(&r.input_required().unwrap()).unwrap();
        let state = out["requestState"].as_str().unwrap().to_string();
        assert!(round(json!({"requestState": state})).is_ok());
        let tampered = format!("{state}-TAMPERED");
        let e = round(json!({"requestState": tampered})).unwrap_err();
        assert_eq!(e.code, super::super::model::INVALID_PARAMS);
        // The same state for other arguments, another name or another method.
        let p = json!({"requestState": state});
        assert!(Round::open("tools/call", "t", &json!({"x": 2}), &p).is_err());
        assert!(Round::open("tools/call", "u", &json!({"x": 1}), &p).is_err());
        assert!(Round::open("prompts/get", "t", &json!({"x": 1}), &p).is_err());
        // A payload altered with its MAC left as it was.
        let (body, mac) = state.rsplit_once('.').unwrap();
        let mut bytes = super::super::wire::header_value(&format!("=?base64?{body}?="))
            .unwrap()
            .replace(
                "\"answers\":{}",
                "\"answers\":{\"k\":{\"action\":\"accept\"}}",
            );
        let forged = format!("{}.{mac}", seneschal_access::text::base64(bytes.as_bytes()));
        assert!(round(json!({"requestState": forged})).is_err());
        bytes.clear();
        assert!(round(json!({"requestState": 7})).is_err());
        assert!(round(json!({"inputResponses": []})).is_err());
        assert!(round(json!({"inputResponses": null})).is_err());
        assert!(round(json!({"inputResponses": {"k": 12345}})).is_err());
    }
}
