use super::*;

/// What `bench` measured: the run count and the wall times in milliseconds.
#[derive(Serialize, Default)]
struct BenchLine {
    runs: usize,
    min_ms: f64,
    median_ms: f64,
    max_ms: f64,
}

impl Row for BenchLine {
    fn cell(&self, field: &str) -> Option<String> {
        let ms = match field {
            "min_ms" => self.min_ms,
            "median_ms" => self.median_ms,
            "max_ms" => self.max_ms,
            _ => return None,
        };
        Some(format!("{ms:.3}"))
    }
}

pub(super) fn cmd_bench(s: &mut Session, a: &Args) -> R<Flow> {
    s.model()?;
    assignments(s, a)?;
    let runs = a.usize_flag("runs", 10)?;
    let warmup = a.usize_flag("warmup", 1)?;
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let p = plan(s)?;
    let inputs = feed(s, &p)?;
    bind_from_inputs(s)?;
    let opts = RunOptions {
        events: false,
        release: true,
        max_values: 0,
        hold_outputs: false,
        ..Default::default()
    };
    let mut times = Vec::with_capacity(runs);
    // a progress bar on a terminal's stderr once a bench passes a second
    let bar = crate::repl::render::progress_bar(
        (warmup + runs) as u64,
        "bench {bar:30} {pos}/{len} runs {elapsed}",
    );
    let started = Instant::now();
    let r: R<()> = with_pool(s, || {
        for i in 0..warmup + runs {
            // the copy of the inputs the run consumes is made before the
            // clock starts: onnxruntime's timing, too, starts with the
            // inputs in place
            let feed = inputs.clone();
            let t0 = Instant::now();
            p.run(feed, &opts).map_err(|e| {
                let done = i.saturating_sub(warmup);
                anyhow!("{} (after {done} of {runs} timed runs)", e)
            })?;
            if i >= warmup {
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            if started.elapsed().as_secs() >= 1 {
                bar.set_position(i as u64 + 1);
            }
        }
        Ok(())
    });
    bar.finish_and_clear();
    r?;
    times.sort_by(|x, y| x.total_cmp(y));
    let median = if times.len() % 2 == 1 {
        times[times.len() / 2]
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
    };
    let (min, max) = (times[0], times[times.len() - 1]);
    let row = BenchLine {
        runs,
        min_ms: min,
        median_ms: median,
        max_ms: max,
    };
    emit(s, a, Data::from_row(row));
    Ok(Flow::Continue)
}
