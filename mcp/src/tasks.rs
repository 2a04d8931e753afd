//! The task table of the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): the
//! tool calls that run on a thread of their own while the client polls them.
//!
//! One table per process, bounded twice: at most [`MAX_TASKS`] tasks at a time, each kept
//! [`TTL_MS`] after its creation and no longer (a task still running then is cancelled). A
//! full table creates no task: the caller answers the call itself, or refuses it. A task's id
//! is 128 random bits, so that only whoever created it can name it.
//!
//! A running task reaches its client through [`TaskPeer`], the [`Peer`] its thread enters:
//! `cancelled` follows `tasks/cancel`, and `ask` parks the request in the task's
//! `inputRequests` (status `input_required`) until `tasks/update` answers it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::peer::capability_of;
use seneschal_core::interact::{Answer, Asked, Peer, Question, Sampled, Sampling};

/// How long a task stays in the table after its creation (`ttlMs`).
pub const TTL_MS: u64 = seneschal_access::limits::MCP_TASK_TTL_MS;

/// How often a client is asked to poll (`pollIntervalMs`).
pub const POLL_INTERVAL_MS: u64 = seneschal_access::limits::MCP_TASK_POLL_MS;

/// The most tasks the table holds at a time, finished or not.
pub const MAX_TASKS: usize = seneschal_access::limits::MCP_TASKS;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Running.
    Working,
    /// Waiting for the answers to its `inputRequests`.
    InputRequired,
    /// Finished with the call's result (a tool error included).
    Completed,
    /// Stopped by a failure of the server (a JSON-RPC error).
    Failed,
    /// Stopped by `tasks/cancel`.
    Cancelled,
}

impl Status {
    /// Its spelling on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    /// Whether nothing changes it any more.
    pub fn terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

/// How a task's call ended.
pub enum Outcome {
    /// The call's result (`CallToolResult`, `isError` true for a tool error).
    Result(Value),
    /// A failure of the server: the JSON-RPC error object.
    Error(Value),
}

/// What changes about a task.
struct State {
    status: Status,
    last_updated: u64,
    /// Requests waiting for the client, by key: `{method, params}`.
    pending: BTreeMap<String, Value>,
    /// Answers delivered by `tasks/update`, by key, until the asking step takes them.
    answers: HashMap<String, Value>,
    result: Option<Value>,
    error: Option<Value>,
}

/// One task.
pub struct Task {
    id: String,
    created: u64,
    born: Instant,
    cancel: AtomicBool,
    state: Mutex<State>,
    changed: Condvar,
}

impl Task {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The fields every answer about the task carries (`Task`).
    fn base(&self, state: &State) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("taskId".into(), json!(self.id));
        m.insert("status".into(), json!(state.status.as_str()));
        m.insert(
            "createdAt".into(),
            json!(seneschal_access::text::rfc3339(self.created)),
        );
        m.insert(
            "lastUpdatedAt".into(),
            json!(seneschal_access::text::rfc3339(state.last_updated)),
        );
        m.insert("ttlMs".into(), json!(TTL_MS));
        m.insert("pollIntervalMs".into(), json!(POLL_INTERVAL_MS));
        m
    }

    /// The `CreateTaskResult` fields: the task as it was created.
    pub fn created(&self) -> Map<String, Value> {
        self.base(&self.lock())
    }

    /// The `tasks/get` answer (`DetailedTask`): the task, and by status its pending
    /// `inputRequests`, its `result` or its `error`.
    pub fn detailed(&self) -> Map<String, Value> {
        let state = self.lock();
        let mut m = self.base(&state);
        match state.status {
            Status::InputRequired => {
                m.insert(
                    "inputRequests".into(),
                    Value::Object(state.pending.clone().into_iter().collect()),
                );
            }
            Status::Completed => {
                if let Some(r) = &state.result {
                    m.insert("result".into(), r.clone());
                }
            }
            Status::Failed => {
                if let Some(e) = &state.error {
                    m.insert("error".into(), e.clone());
                }
            }
            Status::Working | Status::Cancelled => {}
        }
        m
    }

    /// Records how the call ended, unless the task ended before (cancelled).
    pub fn finish(&self, outcome: Outcome) {
        let mut state = self.lock();
        if state.status.terminal() {
            return;
        }
        match outcome {
            Outcome::Result(r) => {
                state.status = Status::Completed;
                state.result = Some(r);
            }
            Outcome::Error(e) => {
                state.status = Status::Failed;
                state.error = Some(e);
            }
        }
        state.pending.clear();
        state.last_updated = now_secs();
        self.changed.notify_all();
    }

    /// `tasks/cancel`: the task is cancelled now (a terminal task stays as it is), and its
    /// call stops at its next check of [`Peer::cancelled`].
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        let mut state = self.lock();
        if !state.status.terminal() {
            state.status = Status::Cancelled;
            state.pending.clear();
            state.last_updated = now_secs();
        }
        self.changed.notify_all();
    }

    /// `tasks/update`: the answers to pending requests are handed to the call; keys that
    /// name no pending request are ignored. The task works again once none is pending.
    pub fn update(&self, responses: &Map<String, Value>) {
        let mut state = self.lock();
        for (key, answer) in responses {
            if state.pending.remove(key).is_some() {
                state.answers.insert(key.clone(), answer.clone());
            }
        }
        if state.status == Status::InputRequired && state.pending.is_empty() {
            state.status = Status::Working;
            state.last_updated = now_secs();
        }
        self.changed.notify_all();
    }

    /// Parks the request `key` until its answer arrives, the task is cancelled or it expires.
    fn wait_for(&self, key: &str, request: Value) -> Asked {
        let deadline = self.born + Duration::from_millis(TTL_MS);
        let mut state = self.lock();
        if let Some(a) = state.answers.remove(key) {
            return Asked::Answered(a);
        }
        if state.status.terminal() {
            return Asked::Failed("the task was cancelled".into());
        }
        state.pending.insert(key.to_string(), request);
        if state.status == Status::Working {
            state.status = Status::InputRequired;
            state.last_updated = now_secs();
        }
        loop {
            if let Some(a) = state.answers.remove(key) {
                return Asked::Answered(a);
            }
            if state.status.terminal() || self.cancel.load(Ordering::SeqCst) {
                return Asked::Failed("the task was cancelled".into());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.pending.remove(key);
                return Asked::Failed(format!(
                    "no answer to `{key}` within the task's {TTL_MS} ms"
                ));
            }
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// The table of tasks.
pub struct Table {
    tasks: Mutex<HashMap<String, Arc<Task>>>,
    cap: usize,
    ttl: Duration,
}

impl Table {
    /// A table of at most `cap` tasks, each kept `ttl`.
    pub fn new(cap: usize, ttl: Duration) -> Table {
        Table {
            tasks: Mutex::new(HashMap::new()),
            cap,
            ttl,
        }
    }

    /// The process's table.
    pub fn global() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| Table::new(MAX_TASKS, Duration::from_millis(TTL_MS)))
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Task>>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops the tasks older than the TTL (cancelling those still running).
    fn expire(&self, tasks: &mut HashMap<String, Arc<Task>>, now: Instant) {
        tasks.retain(|_, t| {
            let keep = now.duration_since(t.born) < self.ttl;
            if !keep {
                t.cancel();
            }
            keep
        });
    }

    /// A new working task, in the table before this returns (a `tasks/get` for it resolves at
    /// once); `None` when the table is full.
    pub fn create(&self) -> Option<Arc<Task>> {
        self.create_at(Instant::now())
    }

    fn create_at(&self, now: Instant) -> Option<Arc<Task>> {
        let mut tasks = self.lock();
        self.expire(&mut tasks, now);
        if tasks.len() >= self.cap {
            return None;
        }
        let secs = now_secs();
        let task = Arc::new(Task {
            id: new_id(),
            created: secs,
            born: now,
            cancel: AtomicBool::new(false),
            state: Mutex::new(State {
                status: Status::Working,
                last_updated: secs,
                pending: BTreeMap::new(),
                answers: HashMap::new(),
                result: None,
                error: None,
            }),
            changed: Condvar::new(),
        });
        tasks.insert(task.id.clone(), Arc::clone(&task));
        Some(task)
    }

    /// The task of this id, unless it expired or never existed.
    pub fn get(&self, id: &str) -> Option<Arc<Task>> {
        let mut tasks = self.lock();
        self.expire(&mut tasks, Instant::now());
        tasks.get(id).cloned()
    }

    /// How many tasks the table holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the table holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Seconds since the epoch, now.
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// 128 random bits, hex.
fn new_id() -> String {
    seneschal_access::text::hex(&seneschal_access::text::random::<16>())
}

/// The peer of a call running as a task.
pub struct TaskPeer {
    task: Arc<Task>,
    /// The client capabilities the creating request declared.
    client: Map<String, Value>,
    /// The answers the client gave before the task existed (`task_asks_first`).
    answered: Map<String, Value>,
    /// Whether the creating request's session vouches for its client's answers.
    vouched: bool,
}

impl TaskPeer {
    /// The peer of `task`, created by a request that declared `client`.
    pub fn new(task: Arc<Task>, client: Map<String, Value>) -> TaskPeer {
        TaskPeer {
            task,
            client,
            answered: Map::new(),
            vouched: false,
        }
    }

    /// The peer of a task created in a session that vouches for its client's answers.
    pub fn vouched(mut self, vouched: bool) -> TaskPeer {
        self.vouched = vouched;
        self
    }

    /// The peer of a task whose questions were answered before it was created.
    pub fn answered(mut self, answers: Map<String, Value>) -> TaskPeer {
        self.answered = answers;
        self
    }
}

impl Peer for TaskPeer {
    fn approve(&self, question: &Question) -> Answer {
        crate::peer::approve_by_elicitation(self, question)
    }

    fn sample(&self, key: &str, request: &Sampling) -> Sampled {
        crate::peer::sample_by_request(self, key, request)
    }

    fn ask(&self, key: &str, method: &str, params: Value) -> Asked {
        if let Some(v) = self.answered.get(key) {
            return Asked::Answered(v.clone());
        }
        if let Some(cap) = capability_of(method) {
            if !self.offers(cap) {
                return Asked::Unavailable(format!(
                    "the client did not declare the `{cap}` capability"
                ));
            }
        }
        self.task
            .wait_for(key, crate::link::to_client(method, params))
    }

    fn cancelled(&self) -> bool {
        self.task.cancel.load(Ordering::SeqCst)
    }

    fn offers(&self, name: &str) -> bool {
        self.client.contains_key(name)
    }

    fn vouched(&self) -> bool {
        self.vouched
    }

    fn waits(&self) -> bool {
        // Its client polls the task: it may wait on the desk as long as the person is given.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_bounded_and_forgets_after_the_ttl() {
        let table = Table::new(2, Duration::from_secs(60));
        let t0 = Instant::now();
        let a = table.create_at(t0).expect("room for one");
        let _b = table.create_at(t0).expect("room for two");
        assert!(table.create_at(t0).is_none(), "a full table creates none");
        // Within the TTL a finished task stays, and keeps its place.
        a.finish(Outcome::Result(json!({"content": []})));
        assert!(table.create_at(t0 + Duration::from_secs(59)).is_none());
        // Past it, both go (the running one cancelled) and make room.
        let c = table
            .create_at(t0 + Duration::from_secs(61))
            .expect("room again");
        assert_eq!(table.len(), 1);
        assert!(table.get(a.id()).is_none());
        assert_ne!(c.id(), a.id());
        assert_eq!(c.id().len(), 32);
    }

    #[test]
    fn cancel_is_terminal_and_a_late_result_does_not_undo_it() {
        let table = Table::new(4, Duration::from_secs(60));
        let t = table.create().unwrap();
        t.cancel();
        t.finish(Outcome::Result(json!({"content": []})));
        let d = t.detailed();
        assert_eq!(d["status"], "cancelled");
        assert!(d.get("result").is_none());
        // Cancelling a finished task changes nothing.
        let done = table.create().unwrap();
        done.finish(Outcome::Error(json!({"code": -32603, "message": "x"})));
        done.cancel();
        assert_eq!(done.detailed()["status"], "failed");
        assert_eq!(done.detailed()["error"]["code"], -32603);
    }

    #[test]
    fn asks_park_as_input_requests_until_each_is_answered() {
        let table = Table::new(4, Duration::from_secs(60));
        let task = table.create().unwrap();
        let peer = Arc::new(TaskPeer::new(
            Arc::clone(&task),
            json!({"elicitation": {}}).as_object().unwrap().clone(),
        ));
        assert!(matches!(
            peer.ask("s", "sampling/createMessage", json!({})),
            Asked::Unavailable(_)
        ));
        let asking: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|k| {
                let p = Arc::clone(&peer);
                std::thread::spawn(move || p.ask(k, "elicitation/create", json!({"k": k})))
            })
            .collect();
        // A generous bound: for a defect, not for a slow machine.
        let deadline = Instant::now() + Duration::from_secs(60);
        while task
            .detailed()
            .get("inputRequests")
            .map(|r| r.as_object().unwrap().len())
            != Some(2)
        {
            assert!(Instant::now() < deadline, "both requests park");
            std::thread::sleep(Duration::from_millis(5));
        }
        let d = task.detailed();
        assert_eq!(d["status"], "input_required");
        assert_eq!(d["inputRequests"]["a"]["method"], "elicitation/create");
        // A partial answer (and an unknown key) leaves the other request pending.
        task.update(
            json!({"a": {"action": "accept"}, "zz": 1})
                .as_object()
                .unwrap(),
        );
        let d = task.detailed();
        assert_eq!(d["status"], "input_required");
        assert_eq!(
            d["inputRequests"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["b"]
        );
        task.update(json!({"b": {"action": "decline"}}).as_object().unwrap());
        assert_eq!(task.detailed()["status"], "working");
        let answers: Vec<Asked> = asking.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(
            answers,
            [
                Asked::Answered(json!({"action": "accept"})),
                Asked::Answered(json!({"action": "decline"}))
            ]
        );
        // A cancelled task answers no more asks.
        task.cancel();
        assert!(peer.cancelled());
        assert!(matches!(
            peer.ask("c", "elicitation/create", json!({})),
            Asked::Failed(_)
        ));
    }
}
