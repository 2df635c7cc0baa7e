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
        // A plain join, even on a runtime worker: by now the queue holds at
        // most the job of a future dropped mid-await, and `block_in_place`
        // is not safe while a runtime shuts down (when stores often drop).
        if let Some(t) = self.thread.take()
            && t.thread().id() != std::thread::current().id()
        {
            let _ = t.join();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> Writer {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (v INTEGER);").unwrap();
        Writer::spawn(Arc::new(Mutex::new(conn))).unwrap()
    }

    #[test]
    fn a_panicking_job_is_an_error_and_the_writer_goes_on() {
        let w = writer();
        let err = w
            .call(|_c| -> Result<(), StoreError> { panic!("boom") })
            .unwrap_err();
        assert!(matches!(err, StoreError::WriterGone), "{err:?}");
        assert!(err.to_string().contains("restart navi"));
        w.call(|c| Ok(c.execute("INSERT INTO t VALUES (1)", [])?))
            .unwrap();
        let n: i64 = w
            .call(|c| Ok(c.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn sync_calls_work_inside_both_runtime_flavours_and_async_calls_await() {
        let w = Arc::new(writer());
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let w2 = w.clone();
        multi
            .block_on(multi.spawn(async move {
                w2.call(|c| Ok(c.execute("INSERT INTO t VALUES (1)", [])?))
                    .unwrap();
                w2.call_async(|c| Ok(c.execute("INSERT INTO t VALUES (2)", [])?))
                    .await
                    .unwrap();
            }))
            .unwrap();
        let single = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        single.block_on(async {
            w.call(|c| Ok(c.execute("INSERT INTO t VALUES (3)", [])?))
                .unwrap();
        });
        let got: Vec<i64> = w
            .call(|c| {
                let mut st = c.prepare("SELECT v FROM t ORDER BY rowid")?;
                let v = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
                Ok(v)
            })
            .unwrap();
        assert_eq!(got, vec![1, 2, 3]);
    }
}
