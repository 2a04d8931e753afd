//! The features served, one module each: its requests, its notifications and the capability
//! it announces, as one [`super::feature::Feature`] that [`super::dispatch::FEATURES`]
//! lists, reading and writing the types of [`super::model`]. A new feature (prompts,
//! completion, subscriptions, logging) is one more module.

pub mod completion;
pub mod lifecycle;
pub mod logging;
pub mod prompts;
pub mod resources;
pub mod tasks;
pub mod tool_result;
pub mod tools;

use serde_json::Value;

use super::model::{RpcError, PAGE};
use super::wire;

/// The error of a cursor that is not one of ours for `list`.
fn invalid_cursor(c: &Value, list: &str) -> RpcError {
    RpcError::invalid_params(format!("invalid params: {c} is not a cursor of {list}"))
}

/// Refuses any cursor: a list that fits on one page has none.
pub fn no_cursor(cursor: Option<&Value>, list: &str) -> Result<(), RpcError> {
    match cursor {
        None => Ok(()),
        Some(c) => Err(invalid_cursor(c, list)),
    }
}

/// The page of `items` that `cursor` names, and the cursor of the next page.
pub fn page<T>(
    mut items: Vec<T>,
    cursor: Option<&Value>,
    list: &str,
) -> Result<(Vec<T>, Option<String>), RpcError> {
    let start = match cursor {
        None => 0,
        Some(Value::String(c)) => wire::decode_cursor(c, list, items.len())
            .ok_or_else(|| invalid_cursor(&Value::String(c.clone()), list))?,
        Some(c) => return Err(invalid_cursor(c, list)),
    };
    let end = (start + PAGE).min(items.len());
    let next = (end < items.len()).then(|| wire::encode_cursor(list, end));
    items.truncate(end);
    items.drain(..start);
    Ok((items, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_their_cursors() {
        let items: Vec<usize> = (0..PAGE + 3).collect();
        let (first, next) = page(items.clone(), None, "l").unwrap();
        assert_eq!(first, (0..PAGE).collect::<Vec<_>>());
        let next = Value::String(next.expect("a second page"));
        let (second, last) = page(items.clone(), Some(&next), "l").unwrap();
        assert_eq!((second, last), ((PAGE..PAGE + 3).collect(), None));
        assert_eq!(
            page(items.clone(), Some(&next), "other").unwrap_err().code,
            super::super::model::INVALID_PARAMS
        );
        assert!(page(items, Some(&Value::from(3)), "l").is_err());
    }
}
