//! Live resources: what a client subscribed to (`resources/subscribe`), and the feed that
//! tells it when a subscribed knowledge object changes (`notifications/resources/updated`)
//! and when knowledge objects appear or vanish (`notifications/resources/list_changed`).
//!
//! Each connection (a stdio process, a Streamable HTTP session) keeps one [`Subscriptions`]
//! in its [`super::model::Session`], with the [`Sink`] its notifications go to (stdout; the
//! session's GET streams), and registers it with its transport's [`Feed`]. The feed looks at
//! the knowledge index through the executor ([`seneschal_core::execute::knowledge_changes`]) every
//! [`TICK`] while some connection can hear it: the index's own inotify hint makes a look at
//! an unchanged tree a few system calls, and the index's stamps decide what changed, so an
//! edit by hand and a write through seneschal reach a subscriber alike, within a tick.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use serde_json::json;

use super::link::Sink;
use seneschal_core::context::Context;
use seneschal_knowledge::watch::Seen;

/// How often the feed looks at the knowledge index while someone listens.
pub const TICK: Duration = Duration::from_millis(seneschal_access::limits::MCP_FEED_TICK_MS);

/// The most URIs one connection may subscribe to.
pub const MAX_SUBSCRIPTIONS: usize = seneschal_access::limits::MCP_SUBSCRIPTIONS;

/// One connection's subscriptions and where its notifications go.
#[derive(Default)]
pub struct Subscriptions {
    uris: Mutex<BTreeSet<String>>,
    sink: Mutex<Option<Arc<dyn Sink>>>,
    /// How many streams can carry a notification now (stdio: one for the process's life; HTTP:
    /// the session's open GET streams).
    listeners: AtomicUsize,
    /// Whether the client listed the resources or subscribed: then list changes matter to it.
    interested: AtomicBool,
    feed: Mutex<Weak<Feed>>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions")
            .field("uris", &self.uris.lock().map(|u| u.len()).ok())
            .field("listeners", &self.listeners.load(Ordering::Relaxed))
            .finish()
    }
}

impl Subscriptions {
    /// Sets where this connection's notifications go.
    pub fn set_sink(&self, sink: Arc<dyn Sink>) {
        *self.sink.lock().expect("not poisoned") = Some(sink);
    }

    /// One more stream can carry notifications (wakes the feed).
    pub fn listen(&self) {
        self.listeners.fetch_add(1, Ordering::AcqRel);
        self.wake();
    }

    /// One stream fewer.
    pub fn unlisten(&self) {
        let _ = self
            .listeners
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }

    /// Subscribes to `uri`; false when the connection holds [`MAX_SUBSCRIPTIONS`] already.
    /// The feed takes its first look now if it never did, so that a change made after this
    /// call is a change.
    pub fn subscribe(&self, ctx: &Context, uri: &str) -> bool {
        {
            let mut uris = self.uris.lock().expect("not poisoned");
            if !uris.contains(uri) && uris.len() >= MAX_SUBSCRIPTIONS {
                return false;
            }
            uris.insert(uri.to_string());
        }
        self.interest(ctx);
        true
    }

    /// The client has seen the resources (it listed or subscribed): from now on it hears of
    /// list changes too. The feed takes its first look now if it never did.
    pub fn interest(&self, ctx: &Context) {
        self.interested.store(true, Ordering::Release);
        if let Some(feed) = self.feed.lock().expect("not poisoned").upgrade() {
            feed.prime(ctx);
            feed.wake.notify_all();
        }
    }

    /// Forgets `uri` (idempotent).
    pub fn unsubscribe(&self, uri: &str) {
        self.uris.lock().expect("not poisoned").remove(uri);
    }

    /// Whether a feed and a sink are set: notifications can reach this connection.
    pub fn can_hear(&self) -> bool {
        self.sink.lock().expect("not poisoned").is_some()
            && self.feed.lock().expect("not poisoned").strong_count() > 0
    }

    /// Whether `uri` is subscribed.
    pub fn has(&self, uri: &str) -> bool {
        self.uris.lock().expect("not poisoned").contains(uri)
    }

    fn wake(&self) {
        if let Some(feed) = self.feed.lock().expect("not poisoned").upgrade() {
            feed.wake.notify_all();
        }
    }

    /// Whether the feed should look for this connection: a stream can carry notifications
    /// and the client cares (it listed the resources or holds a subscription). A connection
    /// that never did costs the feed nothing, and the index is never built for it.
    fn active(&self) -> bool {
        self.listeners.load(Ordering::Acquire) > 0 && self.interested.load(Ordering::Acquire)
    }

    fn send(&self, method: &str, params: serde_json::Value) -> bool {
        let sink = self.sink.lock().expect("not poisoned").clone();
        sink.is_some_and(|s| s.send(&super::link::outgoing(None, method, params)))
    }
}

/// The feed of one transport: the connections that listen, and what the index looked like
/// at the last look.
#[derive(Default)]
pub struct Feed {
    members: Mutex<Vec<Weak<Subscriptions>>>,
    seen: Mutex<Seen>,
    wake: Condvar,
}

impl Feed {
    /// Registers a connection's subscriptions with this feed.
    pub fn register(self: &Arc<Self>, subs: &Arc<Subscriptions>) {
        *subs.feed.lock().expect("not poisoned") = Arc::downgrade(self);
        let mut members = self.members.lock().expect("not poisoned");
        members.retain(|w| w.strong_count() > 0);
        members.push(Arc::downgrade(subs));
        drop(members);
        self.wake.notify_all();
    }

    /// Attaches a connection whose notifications always have somewhere to go (stdio: its
    /// stdout): `sink` receives them, and the feed looks while the connection lives. The
    /// transport then runs [`Feed::run`] (a scoped thread) or [`Feed::spawn`].
    pub fn attach(self: &Arc<Self>, subs: &Arc<Subscriptions>, sink: Arc<dyn Sink>) {
        subs.set_sink(sink);
        self.register(subs);
        subs.listen();
    }

    /// Serves one connection whose notifications always have somewhere to go (stdio):
    /// attaches `subs` with `sink`, and runs the feed on a scoped thread while `serve` runs.
    pub fn with_feed<T>(
        ctx: &Context,
        subs: &Arc<Subscriptions>,
        sink: Arc<dyn Sink>,
        serve: impl FnOnce() -> T,
    ) -> T {
        let feed = Arc::new(Feed::default());
        feed.attach(subs, sink);
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| feed.run(ctx, &|| done.load(Ordering::Acquire)));
            let out = serve();
            done.store(true, Ordering::Release);
            // Taking the lock orders the store before the feed's next check.
            drop(feed.members.lock().expect("not poisoned"));
            feed.wake.notify_all();
            out
        })
    }

    /// Takes the first look at the index, if none was taken yet.
    fn prime(&self, ctx: &Context) {
        let mut seen = self.seen.lock().expect("not poisoned");
        if !seen.primed() {
            seneschal_core::execute::knowledge_changes(ctx, &mut seen);
        }
    }

    /// The connections that can hear a notification now.
    fn listening(&self) -> Vec<Arc<Subscriptions>> {
        let mut members = self.members.lock().expect("not poisoned");
        members.retain(|w| w.strong_count() > 0);
        members
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|s| s.active())
            .collect()
    }

    /// Looks at the index once and notifies the listening connections; how many
    /// notifications were sent.
    pub fn look(&self, ctx: &Context) -> usize {
        let changes = {
            let mut seen = self.seen.lock().expect("not poisoned");
            seneschal_core::execute::knowledge_changes(ctx, &mut seen)
        };
        if changes.updated.is_empty() && !changes.listed {
            return 0;
        }
        let mut sent = 0;
        for subs in self.listening() {
            for uri in &changes.updated {
                if subs.has(uri)
                    && subs.send("notifications/resources/updated", json!({"uri": uri}))
                {
                    sent += 1;
                }
            }
            if changes.listed && subs.send("notifications/resources/list_changed", json!({})) {
                sent += 1;
            }
        }
        sent
    }

    /// Looks every [`TICK`] while a registered connection listens, and sleeps otherwise;
    /// returns when `stop` says so (checked at every wake-up).
    pub fn run(&self, ctx: &Context, stop: &dyn Fn() -> bool) {
        loop {
            {
                let mut members = self.members.lock().expect("not poisoned");
                loop {
                    if stop() {
                        return;
                    }
                    members.retain(|w| w.strong_count() > 0);
                    let active = members.iter().filter_map(Weak::upgrade).any(|s| s.active());
                    if active {
                        break;
                    }
                    members = self
                        .wake
                        .wait_timeout(members, Duration::from_secs(5))
                        .expect("not poisoned")
                        .0;
                }
            }
            self.look(ctx);
            if stop() {
                return;
            }
            std::thread::sleep(TICK);
        }
    }

    /// Runs the feed on a thread of its own for the rest of the process.
    pub fn spawn(self: &Arc<Self>, ctx: Arc<Context>) {
        let feed = Arc::clone(self);
        let _ = std::thread::Builder::new()
            .name("mcp-live".into())
            .spawn(move || feed.run(&ctx, &|| false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seneschal_model::policy::Effect;

    /// A sink that keeps what it hears and wakes whoever waits for it.
    #[derive(Default)]
    struct Collect(Mutex<Vec<serde_json::Value>>, Condvar);

    impl Sink for Collect {
        fn send(&self, message: &[u8]) -> bool {
            self.0
                .lock()
                .unwrap()
                .push(serde_json::from_slice(message).unwrap());
            self.1.notify_all();
            true
        }
    }

    impl Collect {
        /// Waits until what was heard satisfies `done` (at most a generous minute: the
        /// bound is for a defect, not for a slow machine), and returns what was heard.
        fn wait_until(
            &self,
            done: impl Fn(&[serde_json::Value]) -> bool,
        ) -> Vec<serde_json::Value> {
            let heard = self.0.lock().unwrap();
            let (heard, _) = self
                .1
                .wait_timeout_while(heard, Duration::from_secs(60), |h| !done(h))
                .unwrap();
            heard.clone()
        }
    }

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_subscriber_hears_its_edit_and_the_list_change_and_no_one_else_s() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let guide = "docs/guides/setup.md";
        write(root, guide, "---\ntitle: Set up\n---\nInstall things.\n");
        let ctx = Context::new(root.to_path_buf(), Effect::Read);
        let uri = "seneschal://knowledge/guide/setup";

        let feed = Arc::new(Feed::default());
        let heard = Arc::new(Collect::default());
        let subs = Arc::new(Subscriptions::default());
        feed.attach(&subs, heard.clone());
        let deaf = Arc::new(Subscriptions::default());
        let deaf_heard = Arc::new(Collect::default());
        deaf.set_sink(deaf_heard.clone());
        feed.register(&deaf);
        assert!(deaf.subscribe(&ctx, uri));
        assert!(subs.subscribe(&ctx, uri));
        assert_eq!(feed.look(&ctx), 0, "nothing changed yet");

        write(
            root,
            guide,
            "---\ntitle: Set up\n---\nInstall more things.\n",
        );
        assert_eq!(feed.look(&ctx), 1);
        assert_eq!(
            heard.0.lock().unwrap().pop().unwrap(),
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}})
        );
        subs.unsubscribe(uri);
        write(
            root,
            guide,
            "---\ntitle: Set up\n---\nInstall even more things.\n",
        );
        assert_eq!(feed.look(&ctx), 0, "unsubscribed");

        write(
            root,
            "docs/guides/release.md",
            "---\ntitle: Release\n---\nTag it.\n",
        );
        assert_eq!(feed.look(&ctx), 1);
        assert_eq!(
            heard.0.lock().unwrap().pop().unwrap()["method"],
            "notifications/resources/list_changed"
        );
        assert!(
            deaf_heard.0.lock().unwrap().is_empty(),
            "a connection without a listening stream hears nothing"
        );
    }

    #[test]
    fn a_connection_served_with_its_feed_hears_an_edit_and_the_feed_stops_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let guide = "docs/guides/setup.md";
        write(root, guide, "---\ntitle: Set up\n---\nInstall things.\n");
        let ctx = Context::new(root.to_path_buf(), Effect::Read);
        let heard = Arc::new(Collect::default());
        let subs = Arc::new(Subscriptions::default());
        let updated = json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "seneschal://knowledge/guide/setup"}});
        let got = Feed::with_feed(&ctx, &subs, heard.clone(), || {
            assert!(subs.can_hear());
            assert!(
                !subs.active(),
                "nothing listed or subscribed: the feed does not look"
            );
            assert!(subs.subscribe(&ctx, "seneschal://knowledge/guide/setup"));
            write(
                root,
                guide,
                "---\ntitle: Set up\n---\nInstall more things.\n",
            );
            // A look may fall between the write's truncation and its bytes: the guide then
            // vanishes and comes back, and `list_changed` is heard beside `updated`. What is
            // promised is the update, in whatever company.
            heard.wait_until(|h| h.contains(&updated))
        });
        assert!(
            got.contains(&updated),
            "the edit was not heard within a minute: {got:?}"
        );
        for n in &got {
            assert!(
                *n == updated || n["method"] == "notifications/resources/list_changed",
                "only the subscribed URI's update and list changes are heard: {n}"
            );
        }
    }

    #[test]
    fn subscriptions_are_capped() {
        let ctx = Context::new(std::env::temp_dir(), Effect::Read);
        let subs = Subscriptions::default();
        for i in 0..MAX_SUBSCRIPTIONS {
            assert!(subs.subscribe(&ctx, &format!("x://{i}")));
        }
        assert!(subs.subscribe(&ctx, "x://0"), "a URI held already");
        assert!(!subs.subscribe(&ctx, "x://one-more"));
    }
}
