//! The terminal while `browse` runs: raw mode, the alternate screen and a hidden cursor, and
//! the terminal given back as it was however the program leaves: a return or an error (the
//! guard's `Drop`), a panic (a panic hook that restores before the message is printed, so that
//! the message is seen), and SIGTERM or SIGINT (a flag the event loop reads between keys; it
//! then returns and the guard restores).
//!
//! Every byte goes to the terminal through `emit::Terminal`, the handle `emit` gives out when
//! stdout is a terminal: the one writer of stdout stays `emit`.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event};
use ratatui::crossterm::{cursor, execute, terminal};

use crate::emit;

/// How long the loop waits for a key before it looks at the signal flag again: the longest a
/// SIGTERM waits for the terminal to be restored.
const TICK: Duration = Duration::from_millis(100);

/// The terminal in raw mode on the alternate screen, until dropped.
pub struct Screen {
    pub terminal: Terminal<CrosstermBackend<emit::Terminal>>,
    stop: Arc<AtomicBool>,
}

impl Screen {
    /// Takes the terminal over; `out` is stdout, a terminal.
    pub fn open(mut out: emit::Terminal) -> Result<Screen> {
        let stop = Arc::new(AtomicBool::new(false));
        // SIGHUP keeps its default, ending the process: the terminal is gone, there is nothing
        // to restore, and crossterm reads a hung-up terminal's end of file without end. A
        // second SIGTERM or SIGINT ends it at once, should the first not be seen.
        #[cfg(unix)]
        for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
            signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(&stop))
                .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&stop)))
                .context("cannot watch for signals")?;
        }
        on_panic_restore();
        terminal::enable_raw_mode().context("cannot put the terminal in raw mode")?;
        if let Err(err) = execute!(out, terminal::EnterAlternateScreen, cursor::Hide) {
            restore(&mut out);
            return Err(err).context("cannot take the terminal over");
        }
        let terminal = match Terminal::new(CrosstermBackend::new(out)) {
            Ok(terminal) => terminal,
            Err(err) => {
                if let Some(mut out) = emit::terminal() {
                    restore(&mut out);
                }
                return Err(err).context("cannot read the terminal's size");
            }
        };
        Ok(Screen { terminal, stop })
    }

    /// The next event, `None` when a signal asked the program to end.
    pub fn next(&self) -> Result<Option<Event>> {
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return Ok(None);
            }
            match event::poll(TICK) {
                Ok(true) => return Ok(Some(event::read()?)),
                Ok(false) => {}
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// An event already waiting, without waiting for one: keys typed while the last one was
    /// answered, taken together before the screen is drawn again.
    pub fn pending(&self) -> Result<Option<Event>> {
        if self.stop.load(Ordering::SeqCst) || !event::poll(Duration::ZERO)? {
            return Ok(None);
        }
        Ok(Some(event::read()?))
    }

    /// Whether a signal asked the program to end.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore(self.terminal.backend_mut());
    }
}

/// The terminal as it was: the main screen, the cursor shown, cooked mode. Each step is done
/// whatever the others did; doing them twice (a panic, then the guard) does no harm.
fn restore(out: &mut impl Write) {
    let _ = execute!(out, terminal::LeaveAlternateScreen, cursor::Show);
    let _ = out.flush();
    let _ = terminal::disable_raw_mode();
}

/// A panic's message would be drawn on the alternate screen in raw mode, and lost with it:
/// the terminal is restored first, then the message printed as it would have been.
fn on_panic_restore() {
    let earlier = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Some(mut out) = emit::terminal() {
            restore(&mut out);
        }
        earlier(info);
    }));
}
