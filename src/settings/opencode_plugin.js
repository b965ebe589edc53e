// claude-mem's plugin for OpenCode, written by `claude-mem install-hooks --agent opencode` and
// removed by `claude-mem uninstall-hooks --agent opencode` (install writes it again: edits go).
//
// OpenCode has no command hooks: this runs claude-mem's (`claude-mem hook <name> --agent
// opencode`, one JSON event on stdin, in Claude Code's fields) on OpenCode's events, and gives
// the model what they answer (the session-start context, the prompt's recall) in the system
// prompt. A hook that is missing, fails or is slow is given up without a word: OpenCode waits
// on one at most a few seconds, and on the ones that only record, not at all.
import { spawn, spawnSync } from "node:child_process"

const CLAUDE_MEM = "@CLAUDE_MEM@"
// The most milliseconds a hook may take before it is killed.
const WAIT = { context: 5000, prompt: 5000, capture: 5000, summary: 5000, cleanup: 1500 }

function hook(name, event) {
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(CLAUDE_MEM, ["hook", name, "--agent", "opencode"], {
        stdio: ["pipe", "pipe", "ignore"],
      })
    } catch {
      return resolve("")
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL")
      } catch {}
      resolve("")
    }, WAIT[name])
    child.on("error", () => {
      clearTimeout(timer)
      resolve("")
    })
    child.stdout.on("data", (chunk) => {
      out += chunk
    })
    child.on("close", () => {
      clearTimeout(timer)
      resolve(out)
    })
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(event))
  })
}

// The context text of a hook's answer (Claude Code's `hookSpecificOutput.additionalContext`).
function contextOf(answer) {
  try {
    return JSON.parse(answer).hookSpecificOutput?.additionalContext ?? ""
  } catch {
    return ""
  }
}

export const ClaudeMem = async ({ directory }) => {
  // Each session seen: its folder, its start's context, the current prompt's recall, the
  // last text the model said, and the records still being written.
  const sessions = new Map()
  const assistant = new Set()
  const session = (id, cwd) => {
    let s = sessions.get(id)
    if (!s) {
      s = { id, cwd: cwd || directory, recall: "", said: "", writing: [] }
      s.start = hook("context", event(s, "SessionStart", { source: "startup" })).then(contextOf)
      sessions.set(id, s)
    }
    return s
  }
  const event = (s, name, fields) => ({ session_id: s.id, cwd: s.cwd, hook_event_name: name, ...fields })
  const record = (s, name, fields) => {
    s.writing.push(hook("capture", event(s, name, fields)))
  }
  // The process ends (`opencode run` done): every session it had ends with it. The TUI's
  // server runs in a worker, stopped without this: its sessions are left open.
  process.on("exit", () => {
    for (const s of sessions.values()) {
      spawnSync(CLAUDE_MEM, ["hook", "cleanup", "--agent", "opencode"], {
        input: JSON.stringify(event(s, "SessionEnd", { reason: "exit" })),
        stdio: ["pipe", "ignore", "ignore"],
        timeout: WAIT.cleanup,
      })
    }
  })
  const on = {
    "session.created": (p) => session(p.info?.id ?? p.sessionID, p.info?.directory),
    "message.updated": (p) => {
      if (p.info?.role === "assistant") assistant.add(p.info.id)
    },
    "message.part.updated": (p) => {
      const part = p.part ?? {}
      const s = sessions.get(part.sessionID)
      if (!s) return
      if (part.type === "text" && !part.synthetic && assistant.has(part.messageID)) s.said = part.text
      if (part.type === "tool" && part.state?.status === "error") {
        record(s, "PostToolUseFailure", {
          tool_name: part.tool,
          tool_input: part.state.input ?? {},
          tool_use_id: part.callID,
          error: String(part.state.error ?? ""),
        })
      }
    },
    "session.idle": async (p) => {
      const s = sessions.get(p.sessionID)
      if (!s) return
      const writing = s.writing.splice(0)
      await Promise.all(writing)
      await hook("summary", event(s, "Stop", { last_assistant_message: s.said }))
    },
    "session.deleted": async (p) => {
      const id = p.info?.id ?? p.sessionID
      const s = sessions.get(id)
      if (!s) return
      sessions.delete(id)
      await hook("cleanup", event(s, "SessionEnd", { reason: "other" }))
    },
  }
  return {
    event: async ({ event: e }) => {
      if (Object.hasOwn(on, e?.type)) await on[e.type](e.properties ?? {})
    },
    "chat.message": async (input, output) => {
      const s = session(input.sessionID)
      const prompt = (output.parts ?? [])
        .filter((part) => part.type === "text" && !part.synthetic && !part.ignored)
        .map((part) => part.text)
        .join("\n")
      await s.start
      s.recall = prompt ? contextOf(await hook("prompt", event(s, "UserPromptSubmit", { prompt }))) : ""
    },
    "tool.execute.after": async (input, output) => {
      const s = session(input.sessionID)
      record(s, "PostToolUse", {
        tool_name: input.tool,
        tool_input: input.args ?? {},
        tool_use_id: input.callID,
        tool_response: { title: output?.title, output: output?.output, metadata: output?.metadata },
      })
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return
      const s = session(input.sessionID)
      for (const text of [await s.start, s.recall]) if (text) output.system.push(text)
    },
  }
}
