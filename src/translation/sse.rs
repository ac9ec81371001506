// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A streamed chat completion (`"stream": true`): server-sent events whose
//! data are `chat.completion.chunk` objects, read into the answer's text.
//!
//! What the servers send besides the chunks: comment lines (`: ping`, from
//! llama.cpp's server and llama-cpp-python) are skipped; a chunk whose
//! `choices` is empty (vLLM's usage chunk, with `stream_options`) is
//! skipped; `data: [DONE]` ends the answer. An answer is whole when a
//! chunk gave a `finish_reason`; one that ends without it, `[DONE]`
//! included, was cut off (llama-cpp-python ends a stream it interrupts for
//! a newer request with a bare `[DONE]`), and `finish_reason: length` (the
//! model's token limit) cut the translation short: both are faults, not
//! text.

use std::io::BufRead;

use serde_json::Value;

/// Why an answer gives no translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerFault {
    /// Not a chat completion (or chunk), or not UTF-8.
    Malformed(String),
    /// The stream ended, or broke, before its end.
    Cut(String),
    /// The connection timed out while the answer came.
    TimedOut,
    /// `finish_reason: length`.
    Length,
    /// The server sent an error object instead of a chunk.
    ServerError(String),
}

/// The answer, as its events come.
#[derive(Debug, Default)]
pub struct StreamAnswer {
    text: String,
    /// The data lines of the event in progress.
    data: String,
    finish_reason: Option<String>,
    done: bool,
}

impl StreamAnswer {
    /// Takes one line of the stream, without its line end.
    pub fn line(&mut self, line: &str) -> Result<(), AnswerFault> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if self.done || line.starts_with(':') {
            return Ok(());
        }
        if line.is_empty() {
            return self.dispatch();
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        // `event`, `id` and `retry` mean nothing to a chat completion.
        if field == "data" {
            self.data.push_str(value);
            self.data.push('\n');
        }
        Ok(())
    }

    /// `data: [DONE]` came: nothing more is to be read.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The stream ended here: the text, if the answer is whole.
    pub fn end(mut self) -> Result<String, AnswerFault> {
        // A last event without its blank line still counts.
        self.dispatch()?;
        match (self.finish_reason.is_some(), self.done) {
            (true, _) => Ok(self.text),
            (false, true) => Err(AnswerFault::Cut(
                "data: [DONE] came before a finish_reason (llama-cpp-python's server \
                 ends a stream so when a newer request interrupts it: start it with \
                 --interrupt_requests False)"
                    .into(),
            )),
            (false, false) => Err(AnswerFault::Cut(
                "the stream ended before data: [DONE] and without a finish_reason".into(),
            )),
        }
    }

    /// The connection broke: the text if the answer was whole anyway.
    fn broken(self, error: std::io::Error) -> Result<String, AnswerFault> {
        if self.finish_reason.is_some() {
            return Ok(self.text);
        }
        match error.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                Err(AnswerFault::TimedOut)
            }
            _ => Err(AnswerFault::Cut(format!("the stream broke: {error}"))),
        }
    }

    /// Handles the data of the event that just ended.
    fn dispatch(&mut self) -> Result<(), AnswerFault> {
        let data = std::mem::take(&mut self.data);
        let data = data.trim_end_matches('\n');
        if data.is_empty() {
            return Ok(());
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| AnswerFault::Malformed(format!("a chunk is not JSON ({e}): {data}")))?;
        self.take_chunk(&chunk)
    }

    fn take_chunk(&mut self, chunk: &Value) -> Result<(), AnswerFault> {
        if let Some(error) = chunk.get("error") {
            return Err(AnswerFault::ServerError(error_text(error)));
        }
        let choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .ok_or_else(|| AnswerFault::Malformed(format!("a chunk has no choices: {chunk}")))?;
        let Some(choice) = choices.first() else {
            // vLLM's usage chunk.
            return Ok(());
        };
        if let Some(content) = choice.pointer("/delta/content").and_then(Value::as_str) {
            self.text.push_str(content);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            if reason == "length" {
                return Err(AnswerFault::Length);
            }
            self.finish_reason = Some(reason.to_owned());
        }
        Ok(())
    }
}

/// Reads a streamed answer to its end: `[DONE]`, or the end of the stream.
pub fn read_stream(reader: impl BufRead) -> Result<String, AnswerFault> {
    read_stream_with(reader, || {})
}

/// [`read_stream`], calling `first_text` once, when the answer's first
/// text comes (how long a server kept a request waiting shows there).
pub fn read_stream_with(
    mut reader: impl BufRead,
    first_text: impl FnOnce(),
) -> Result<String, AnswerFault> {
    let mut answer = StreamAnswer::default();
    let mut line = Vec::new();
    let mut first_text = Some(first_text);
    while !answer.is_done() {
        if !answer.text.is_empty() {
            if let Some(call) = first_text.take() {
                call();
            }
        }
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                let text = std::str::from_utf8(&line)
                    .map_err(|_| AnswerFault::Malformed("the stream is not UTF-8".into()))?;
                answer.line(text.strip_suffix('\n').unwrap_or(text))?;
            }
            Err(e) => return answer.broken(e),
        }
    }
    answer.end()
}

/// The message of an OpenAI-style error object (`{"message": ...}`), or
/// the object itself.
pub fn error_text(error: &Value) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map_or_else(|| error.to_string(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(content: &str) -> String {
        format!(r#"data: {{"choices":[{{"index":0,"delta":{{"content":"{content}"}}}}]}}"#)
    }

    fn read(lines: &[&str]) -> Result<String, AnswerFault> {
        read_stream(lines.join("\n").as_bytes())
    }

    const STOP: &str = r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#;

    #[test]
    fn deltas_are_joined_until_done() {
        let (a, b) = (chunk("Buenas "), chunk("noches."));
        let text = read(&[
            &a,
            "",
            &b,
            "",
            STOP,
            "",
            "data: [DONE]",
            "",
            "data: garbage",
        ]);
        assert_eq!(text.unwrap(), "Buenas noches.");
    }

    #[test]
    fn pings_usage_chunks_and_other_fields_are_skipped() {
        let a = chunk("Hola");
        let usage = r#"data: {"choices":[],"usage":{"total_tokens":9}}"#;
        let text = read(&[
            ": ping",
            "",
            "event: message",
            "id: 1",
            &a,
            "\r",
            ": ping - 2026",
            usage,
            "",
            STOP,
            "",
            "data: [DONE]",
        ]);
        assert_eq!(text.unwrap(), "Hola");
    }

    #[test]
    fn a_stream_that_stops_before_its_end_is_cut() {
        let a = chunk("Hola");
        assert!(matches!(read(&[&a, ""]), Err(AnswerFault::Cut(_))));
        // A finish_reason makes it whole even without [DONE]; [DONE]
        // without one does not (an interrupted llama-cpp-python stream).
        assert_eq!(read(&[&a, "", STOP, ""]).unwrap(), "Hola");
        assert!(matches!(
            read(&[&a, "", "data: [DONE]", ""]),
            Err(AnswerFault::Cut(_))
        ));
    }

    #[test]
    fn the_token_limit_is_a_fault() {
        let a = chunk("Hola");
        let length = r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#;
        assert_eq!(read(&[&a, "", length, ""]), Err(AnswerFault::Length));
    }

    #[test]
    fn an_error_object_or_a_broken_chunk_is_a_fault() {
        let error = r#"data: {"error":{"message":"out of memory","code":500}}"#;
        assert_eq!(
            read(&[error, ""]),
            Err(AnswerFault::ServerError("out of memory".into()))
        );
        assert!(matches!(
            read(&["data: {\"choi", ""]),
            Err(AnswerFault::Malformed(_))
        ));
        assert!(matches!(
            read(&["data: {}", ""]),
            Err(AnswerFault::Malformed(_))
        ));
    }

    #[test]
    fn data_of_several_lines_is_one_chunk() {
        let lines = [
            r#"data: {"choices":[{"index":0,"#,
            r#"data: "delta":{"content":"Hola"},"finish_reason":"stop"}]}"#,
            "",
            "data: [DONE]",
            "",
        ];
        assert_eq!(read(&lines).unwrap(), "Hola");
    }
}
