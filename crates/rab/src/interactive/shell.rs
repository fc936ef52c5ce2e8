//! Shell lines typed in the editor (`!cmd`, `!!cmd`, `,cmd`, `,,cmd`): run off the UI
//! thread with live output, then shown; shared with the model as the line says.

use tokio_util::sync::CancellationToken;

use super::app::BangView;
use super::{BangMsg, Ui};
use rab_core::input::ShellLine;

impl Ui {
    pub(super) fn start_bang(&mut self, bang: ShellLine) {
        self.app.bang = Some(BangView {
            command: bang.command.clone(),
            output: String::new(),
            started: std::time::Instant::now(),
        });
        let launch = self.app.launch.clone();
        let tx = self.bang_tx.clone();
        tokio::spawn(async move {
            let (sink, mut rx) = rab_agent::UpdateSink::channel("shell");
            let forward_tx = tx.clone();
            let forward = tokio::spawn(async move {
                while let Some((_, chunk)) = rx.recv().await {
                    let _ = forward_tx.send(BangMsg::Output(chunk));
                }
            });
            let result =
                rab_core::shell_line::run(&launch, &bang, CancellationToken::new(), sink).await;
            let _ = forward.await;
            let _ = tx.send(BangMsg::Done(result, bang));
        });
    }

    pub(super) fn bang_msg(&mut self, msg: BangMsg) {
        match msg {
            BangMsg::Note(Ok(text)) => self.app.info(&text),
            BangMsg::Note(Err(e)) => self.app.error(&e),
            BangMsg::Later(outcome) => self.outcome(outcome),
            BangMsg::Output(chunk) => {
                if let Some(b) = &mut self.app.bang {
                    b.output.push_str(&chunk);
                }
            }
            BangMsg::Done(result, bang) => self.bang_done(&result, &bang),
        }
    }

    fn bang_done(&mut self, result: &rab_core::shell_line::ShellResult, bang: &ShellLine) {
        self.app.bang = None;
        let t = &self.app.theme;
        let mut lines =
            vec![String::new(), t.fg(rab_tui::Role::Bash, &format!("$ {}", bang.command))];
        let width = self.app.width.saturating_sub(2).max(10);
        let body = result.output.lines().flat_map(|l| rab_tui::wrap::wrap(l, width)).map(|l| {
            let l = if result.is_error { t.fg(rab_tui::Role::Error, &l) } else { t.dim(&l) };
            format!("  {l}")
        });
        lines.extend(body);
        let context = rab_core::shell_line::context(&bang.command, result);
        match (bang.share, bang.gated) {
            (true, false) => self.app.pending_context.push(context),
            (true, true) => {
                self.app.commit.extend(lines);
                self.effect(super::app::Effect::Run(context));
                return;
            }
            (false, _) => lines.push(t.dim("  (not sent to the model)")),
        }
        self.app.commit.extend(lines);
    }
}
