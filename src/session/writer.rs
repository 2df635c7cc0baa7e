//! The database's one writer: a thread that owns the read-write connection
//! and runs write jobs, in the order they were sent, one at a time.
//!
//! Invariants:
//! - every job carries its own reply channel and is answered, also when it
//!   fails (`Err`) or panics (the job's reply is dropped: the caller gets
//!   [`StoreError::WriterGone`], the thread goes on with the next job);
//! - a caller that waited for its reply sees its write committed, so a read
//!   on another connection afterwards sees it too;
//! - a caller on a multi-thread tokio runtime never blocks a worker: the
//!   blocking wait runs inside `block_in_place` (the runtime hands the
//!   worker's other tasks to another thread); async callers await instead;
//! - dropping the writer lets the queued jobs finish, then closes the
//!   connection and joins the thread.
use super::store::StoreError;
use rusqlite::Connection;
use std::sync::{Arc, Mutex, mpsc};

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

pub(crate) struct Writer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread that writes through `conn`. For a file database
    /// the thread is the connection's only user; an in-memory database has
    /// no second connection, so its reads lock the same one between jobs.
    pub(crate) fn spawn(conn: Arc<Mutex<Connection>>) -> Result<Self, StoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("navi-db-writer".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    // A panicking job drops its reply sender while unwinding
                    // (its open transaction rolls back); its caller gets an
                    // error and the writer goes on.
                    let mut c = conn.lock().unwrap_or_else(|p| p.into_inner());
                    let run = std::panic::AssertUnwindSafe(|| job(&mut c));
                    if std::panic::catch_unwind(run).is_err() {
                        tracing::error!("session database: a write job panicked");
                    }
                }
            })
            .map_err(StoreError::Thread)?;
        Ok(Writer {
            jobs: Some(tx),
            thread: Some(thread),
        })
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        self.jobs
            .as_ref()
            .ok_or(StoreError::WriterGone)?
            .send(job)
            .map_err(|_| StoreError::WriterGone)
    }

    /// Runs `f` on the writer thread and waits for its result.
    pub(crate) fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.send(Box::new(move |c| {
            let _ = tx.send(f(c));
        }))?;
        blocking(|| rx.recv()).map_err(|_| StoreError::WriterGone)?
    }

    /// Runs `f` on the writer thread; the caller awaits the result without
    /// holding a runtime thread.
    pub(crate) async fn call_async<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.send(Box::new(move |c| {
            let _ = tx.send(f(c));
        }))?;
        rx.await.map_err(|_| StoreError::WriterGone)?
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop after the queued jobs.
        self.jobs.take();
        if let Some(t) = self.thread.take()
            && t.thread().id() != std::thread::current().id()
        {
            let _ = blocking(|| t.join());
        }
    }
}

/// Runs a blocking wait; on a multi-thread tokio runtime's worker it runs
/// inside `block_in_place`, so the worker's other tasks move elsewhere. A
/// current-thread runtime (one-shot `navi run`) has nowhere to move them:
/// there the wait is a plain one, as short as the write it waits for.
pub(crate) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}
