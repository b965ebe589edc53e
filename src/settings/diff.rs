//! A unified line diff for `--dry-run`, so that the user sees exactly which lines a change
//! would add or remove before anything is written.

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Above this many table cells the middle is shown as removed-then-added instead of aligned:
/// still a correct diff, without quadratic memory on a huge file.
const MAX_CELLS: usize = 4_000_000;

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Keep,
    Remove,
    Add,
}

pub fn unified(label: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = line_ops(&a, &b);

    let mut out = format!("--- {label}\n+++ {label}\n");
    // Walk the ops, printing runs of changes with CONTEXT lines around them.
    let (mut i, mut j, mut k) = (0, 0, 0);
    while k < ops.len() {
        let Some(first_change) = ops[k..].iter().position(|op| *op != Op::Keep) else {
            break;
        };
        let skip = first_change.saturating_sub(CONTEXT);
        (i, j, k) = (i + skip, j + skip, k + skip);
        // The hunk ends after CONTEXT unchanged lines that are not followed by another change
        // within 2 * CONTEXT lines.
        let mut end = k;
        let mut quiet = 0;
        while end < ops.len() && quiet < 2 * CONTEXT + 1 {
            quiet = if ops[end] == Op::Keep { quiet + 1 } else { 0 };
            end += 1;
        }
        let end = if quiet > CONTEXT {
            end - (quiet - CONTEXT)
        } else {
            end
        };
        let old_len = ops[k..end].iter().filter(|op| **op != Op::Add).count();
        let new_len = ops[k..end].iter().filter(|op| **op != Op::Remove).count();
        out.push_str(&format!(
            "@@ -{},{old_len} +{},{new_len} @@\n",
            i + usize::from(old_len > 0),
            j + usize::from(new_len > 0)
        ));
        for op in &ops[k..end] {
            let (sign, line) = match op {
                Op::Keep => (' ', a[i]),
                Op::Remove => ('-', a[i]),
                Op::Add => ('+', b[j]),
            };
            out.push(sign);
            out.push_str(line);
            out.push('\n');
            if *op != Op::Add {
                i += 1;
            }
            if *op != Op::Remove {
                j += 1;
            }
        }
        k = end;
    }
    out
}

/// The edit script from `a` to `b`: a longest common subsequence of the lines between the
/// common head and tail.
fn line_ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);

    let mut ops = vec![Op::Keep; head];
    if ma.len().saturating_mul(mb.len()) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Remove, ma.len()));
        ops.extend(std::iter::repeat_n(Op::Add, mb.len()));
    } else {
        let width = mb.len() + 1;
        let mut lcs = vec![0u32; (ma.len() + 1) * width];
        for x in (0..ma.len()).rev() {
            for y in (0..mb.len()).rev() {
                lcs[x * width + y] = if ma[x] == mb[y] {
                    lcs[(x + 1) * width + y + 1] + 1
                } else {
                    lcs[(x + 1) * width + y].max(lcs[x * width + y + 1])
                };
            }
        }
        let (mut x, mut y) = (0, 0);
        while x < ma.len() || y < mb.len() {
            if x < ma.len() && y < mb.len() && ma[x] == mb[y] {
                ops.push(Op::Keep);
                (x, y) = (x + 1, y + 1);
            } else if x < ma.len()
                && (y == mb.len() || lcs[(x + 1) * width + y] >= lcs[x * width + y + 1])
            {
                ops.push(Op::Remove);
                x += 1;
            } else {
                ops.push(Op::Add);
                y += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Keep, tail));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_changed_lines_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let new = "a\nb\nc\nd\nX\ne\nf\ng\nh\ni\nY\n";
        let diff = unified("s.json", old, new);
        assert_eq!(
            diff,
            "--- s.json\n+++ s.json\n@@ -2,9 +2,10 @@\n b\n c\n d\n+X\n e\n f\n g\n h\n i\n-j\n+Y\n"
        );
        assert_eq!(
            unified("s", "", "{}\n"),
            "--- s\n+++ s\n@@ -0,0 +1,1 @@\n+{}\n"
        );
        assert_eq!(unified("s", "x\n", "x\n"), "--- s\n+++ s\n");
    }
}
