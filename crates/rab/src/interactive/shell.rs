//! Shell lines typed in the editor (`!cmd`, `!!cmd`, `,cmd`, `,,cmd`), run by the
//! runtime: their live output, then the result, and whether it went to the model.

use super::Ui;
use super::app::BangView;

impl Ui {
    pub(super) fn shell_started(&mut self, command: String) {
        self.app.bang =
            Some(BangView { command, output: String::new(), started: std::time::Instant::now() });
    }

    pub(super) fn shell_output(&mut self, chunk: &str) {
        if let Some(b) = &mut self.app.bang {
            b.output.push_str(chunk);
        }
    }

    pub(super) fn shell_ended(
        &mut self,
        command: &str,
        output: &str,
        is_error: bool,
        is_shared: bool,
    ) {
        self.app.bang = None;
        let t = &self.app.theme;
        let mut lines = vec![String::new(), t.fg(rab_tui::Role::Bash, &format!("$ {command}"))];
        let width = self.app.width.saturating_sub(2).max(10);
        let body = output.lines().flat_map(|l| rab_tui::wrap::wrap(l, width)).map(|l| {
            let l = if is_error { t.fg(rab_tui::Role::Error, &l) } else { t.dim(&l) };
            format!("  {l}")
        });
        lines.extend(body);
        if !is_shared {
            lines.push(t.dim("  (not sent to the model)"));
        }
        self.app.commit.extend(lines);
    }
}
