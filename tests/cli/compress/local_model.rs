//! The example of `CLAUDE_MEM_COMPRESS_CMD` in docs/compression.md: a local model through
//! ollama's API, run as the docs print it against a stand-in for that API.

use std::thread;

use super::*;

/// The example of `CLAUDE_MEM_COMPRESS_CMD` in docs/compression.md, run as it is printed there,
/// against a stand-in for ollama's API: what it sends (the instructions, the digest, the schema
/// as the format) and what comes of its answer.
#[test]
fn the_documented_example_command_compresses_with_a_local_model() {
    if !harness::require_program("python3") {
        return;
    }
    let doc =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/compression.md")).unwrap();
    let section = &doc[doc.find("\n## The model\n").unwrap()..];
    let start = section.find("```python\n").unwrap() + "```python\n".len();
    let example = &section[start..start + section[start..].find("```").unwrap()];
    let env = Env::new();
    let script = env.root.path().join("claude-mem-ollama");
    harness::write_program(&script, example);
    let ollama = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let env = env
        .with("CLAUDE_MEM_COMPRESS_CMD", script.to_str().unwrap())
        .with("OLLAMA_HOST", &ollama.local_addr().unwrap().to_string());
    let requests = thread::spawn(move || fake_ollama(ollama.accept().unwrap().0));
    working_session(&env, "s1");
    let out = ok(&compress(&env, &[]));
    assert!(
        out.contains("into 1 memory and 1 summary (1 model call)"),
        "{out}"
    );
    let request = requests.join().unwrap();
    assert_eq!(request["model"], "qwen2.5-coder:7b");
    assert_eq!(
        request["format"]["required"],
        json!(["observations", "summary"])
    );
    assert!(
        request["system"]
            .as_str()
            .unwrap()
            .contains("You write memories")
    );
    assert!(
        request["prompt"]
            .as_str()
            .unwrap()
            .contains("#1 read src/billing.rs")
    );
    assert_eq!(
        rows(
            &env,
            "SELECT input_tokens, output_tokens, outcome FROM compress_calls"
        ),
        [json!([321, 45, "stored"])]
    );
}

/// Answers one `POST /api/generate` as ollama does (the answer as JSON text in `response`,
/// the token counts beside it); returns the request's body.
fn fake_ollama(stream: std::net::TcpStream) -> Value {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let request: Value = serde_json::from_slice(&body).unwrap();
    let answer = json!({"observations": [{"type": "discovery", "title": "Rounding is per item",
        "narrative": "n", "facts": [], "concepts": [], "files_read": [], "files_modified": [],
        "sources": [1]}], "summary": {"request": "r", "investigated": "", "learned": "",
        "completed": "", "next_steps": ""}});
    let reply = json!({"model": "qwen2.5-coder:7b", "response": answer.to_string(),
                       "done": true, "prompt_eval_count": 321, "eval_count": 45})
    .to_string();
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{reply}",
        reply.len()
    )
    .unwrap();
    request
}
