//! Running the tool calls of one reply: consecutive parallel calls together,
//! sequential ones alone, each through the hooks, with its progress streamed and its
//! result recorded in the calls' order.

use super::*;

impl Agent {
    /// Runs the calls of one reply: consecutive parallel calls together, sequential
    /// ones alone. Between groups, queued steering skips the rest. Returns a stop cause
    /// when the run must end (cancelled, fatal tool error).
    pub(super) async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<Option<StopCause>, String> {
        let mut index = 0;
        while index < calls.len() {
            if cancel.is_cancelled() {
                self.finish_calls(&calls[index..], ABORTED, sink)?;
                return Ok(Some(StopCause::Aborted));
            }
            if index > 0 && self.queues.has_steering() {
                self.finish_calls(&calls[index..], SKIPPED_STEERING, sink)?;
                return Ok(None);
            }
            let end = self.group_end(calls, index);
            let group = &calls[index..end];
            for call in group {
                sink.emit(AgentEvent::ToolCall { call: call.clone() })?;
            }
            let outcomes = self.run_group(group, sink, cancel).await?;
            let mut fatal = None;
            for (outcome, elapsed) in outcomes {
                match outcome {
                    Outcome::Done(result, details) => {
                        self.push_result(result, details, elapsed, sink)?
                    }
                    Outcome::Fatal(result, message) => {
                        self.push_result(result, None, elapsed, sink)?;
                        fatal.get_or_insert(message);
                    }
                }
            }
            index = end;
            if let Some(message) = fatal {
                self.finish_calls(
                    &calls[index..],
                    "not run: an earlier tool failed fatally",
                    sink,
                )?;
                return Ok(Some(StopCause::Error { message }));
            }
            if cancel.is_cancelled() {
                self.finish_calls(&calls[index..], ABORTED, sink)?;
                return Ok(Some(StopCause::Aborted));
            }
        }
        Ok(None)
    }

    fn group_end(&self, calls: &[ToolCall], start: usize) -> usize {
        let sequential = |c: &ToolCall| {
            self.tool(&c.name).is_some_and(|t| t.mode() == ExecutionMode::Sequential)
        };
        if sequential(&calls[start]) {
            return start + 1;
        }
        let mut end = start + 1;
        while end < calls.len() && !sequential(&calls[end]) {
            end += 1;
        }
        end
    }

    pub(super) fn tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }

    async fn run_group(
        &self,
        group: &[ToolCall],
        sink: &mut dyn EventSink,
        cancel: &CancellationToken,
    ) -> Result<Vec<(Outcome, u64)>, String> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let runs = join_all(group.iter().map(|call| {
            let cx = ToolContext {
                call_id: call.id.clone(),
                cancel: cancel.child_token(),
                updates: UpdateSink::new(&call.id, tx.clone()),
            };
            async move { self.run_call(call, cx).await }
        }));
        drop(tx);
        tokio::pin!(runs);
        let outcomes = loop {
            tokio::select! {
                biased;
                Some((call_id, chunk)) = rx.recv() => sink.emit(AgentEvent::ToolUpdate { call_id, chunk })?,
                outcomes = &mut runs => break outcomes,
            }
        };
        while let Ok((call_id, chunk)) = rx.try_recv() {
            sink.emit(AgentEvent::ToolUpdate { call_id, chunk })?;
        }
        Ok(outcomes)
    }

    /// Runs one call through the hooks; the time is the tool's own (a permission
    /// question's wait, in a hook, is not counted).
    async fn run_call(&self, call: &ToolCall, cx: ToolContext) -> (Outcome, u64) {
        debug!(call_id = %call.id, tool = %call.name, "tool call");
        if let Some(raw) = &call.invalid_arguments {
            let why =
                serde_json::from_str::<Value>(raw).err().map(|e| e.to_string()).unwrap_or_default();
            let shown: String = raw.chars().take(300).collect();
            let mut text =
                format!("invalid JSON arguments for {}: {why}; received: {shown}", call.name);
            if let Some(max_tokens) = self.cut_off {
                text.push_str(&format!(
                    ". Your reply hit the output limit ({max_tokens} tokens) while writing \
                     them: make the call smaller (for a large file, write it in parts)"
                ));
            }
            return (Outcome::Done(error_result(call, &text), None), 0);
        }
        let Some(tool) = self.tool(&call.name) else {
            let names: Vec<&str> = self.specs.iter().map(|s| s.name.as_str()).collect();
            let text =
                format!("unknown tool '{}'; available tools: {}", call.name, names.join(", "));
            return (Outcome::Done(error_result(call, &text), None), 0);
        };
        // Each hook sees the arguments as the hooks before it left them.
        let mut call = std::borrow::Cow::Borrowed(call);
        for hook in &self.hooks {
            match hook.before(&call, tool.as_ref(), &cx.cancel).await {
                HookDecision::Continue => {}
                HookDecision::Rewrite(args) => call.to_mut().arguments = args,
                HookDecision::Block(reason) => {
                    return (Outcome::Done(error_result(&call, &reason), None), 0);
                }
            }
        }
        let call = call.as_ref();
        let cancel = cx.cancel.clone();
        let start = Instant::now();
        let run = tool.execute(call.arguments.clone(), cx);
        tokio::pin!(run);
        let mut result = tokio::select! {
            r = &mut run => r,
            // A cancelled tool gets a moment to stop by itself and report what it did
            // (bash returns the output so far); one that does not is abandoned.
            _ = cancel.cancelled() => tokio::time::timeout(CANCEL_GRACE, &mut run)
                .await
                .unwrap_or_else(|_| Err(ToolError::Model(ABORTED.to_owned()))),
        };
        let elapsed = start.elapsed().as_millis() as u64;
        if cancel.is_cancelled()
            && let Err(ToolError::Model(text)) = &result
            && !text.starts_with(ABORTED)
        {
            result = Err(ToolError::Model(format!("{ABORTED}\n{text}")));
        }
        let (mut message, details, fatal) = match result {
            Ok(out) => (
                ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: out.content,
                    is_error: false,
                },
                out.details,
                None,
            ),
            Err(ToolError::Model(text)) => (error_result(call, &text), None, None),
            Err(ToolError::Fatal(text)) => (error_result(call, &text), None, Some(text)),
        };
        for hook in &self.hooks {
            if let Some(replaced) = hook.after(call, &message, &cancel).await {
                message = replaced;
            }
        }
        let outcome = match fatal {
            Some(text) => Outcome::Fatal(message, text),
            None => Outcome::Done(message, details),
        };
        (outcome, elapsed)
    }
}
