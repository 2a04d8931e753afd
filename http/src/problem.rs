//! RFC 9457 problem details: how a [`CapabilityError`] travels over HTTP.
//!
//! The body is `application/problem+json` with `type`, `title`, `status`, `detail` and
//! seneschal's stable `code`, plus `pointer` and `data` when the error carries them. The status
//! comes from [`seneschal_model::codes::ErrorCode::http_status`] unless the HTTP layer itself refuses the
//! request (413, 405, ...), in which case it passes its own status and the closest code.

use serde_json::{json, Value};

use seneschal_access::error::CapabilityError;

/// The media type of a problem.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The problem `type` URI of a code: a stable URN, one per code.
pub fn type_uri(code: &str) -> String {
    format!("urn:seneschal:problem:{code}")
}

/// The problem document of `e` answered with `status`.
pub fn body(e: &CapabilityError) -> Value {
    let meaning = e.code.meaning();
    let mut title = meaning[..1].to_ascii_uppercase();
    title.push_str(&meaning[1..]);
    let mut v = json!({
        "type": type_uri(e.code.as_str()),
        "title": title,
        "status": e.code.http_status(),
        "detail": e.message,
        "code": e.code.as_str(),
    });
    if let Some(p) = &e.pointer {
        v["pointer"] = Value::String(p.clone());
    }
    if let Some(d) = &e.data {
        v["data"] = d.clone();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carries_code_status_pointer_and_data() {
        let e = CapabilityError::invalid_input("bad")
            .at("/id")
            .with_data(json!({"k": 1}));
        let v = body(&e);
        assert_eq!(v["type"], "urn:seneschal:problem:invalid_input");
        assert_eq!(v["status"], 400);
        assert_eq!(v["code"], "invalid_input");
        assert_eq!(v["detail"], "bad");
        assert_eq!(v["pointer"], "/id");
        assert_eq!(v["data"]["k"], 1);
        assert!(v["title"].as_str().unwrap().starts_with('T'));
    }
}
