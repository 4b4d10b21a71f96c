//! How `hookgate policy simulate` shows a report: the text report with its
//! terminal histogram, and the SVG drawing.

use std::fmt::{self, Write as _};

use hookgate_server::{EffectivePolicy, SimulationReport, Strategy};

/// Rows of the terminal histogram and columns of the SVG one.
const TEXT_BUCKETS: usize = 40;
const SVG_BUCKETS: usize = 100;
/// Width of the longest terminal bar.
const BAR_WIDTH: u64 = 50;

/// The text report: setup, schedule table, outcome, histogram and herd numbers.
pub(super) fn render_text(report: &SimulationReport) -> Result<String, fmt::Error> {
    let (cfg, mut out) = (&report.config, String::new());
    let (outage, attempt) = (human(cfg.outage_ms), human(cfg.attempt_ms));
    writeln!(out, "{} deliveries fail together at t=0", cfg.events)?;
    writeln!(
        out,
        "receiver: 503 for {outage}, then 200; attempts take {attempt}"
    )?;
    let policy = &cfg.policy;
    writeln!(out, "policy: {}", headline(policy))?;
    let (window, cap) = (human(policy.retry_window_ms), human(policy.max_delay_ms));
    let attempts = policy.max_attempts;
    writeln!(
        out,
        "limits: {attempts} attempts, max delay {cap}, window {window}\n"
    )?;
    writeln!(
        out,
        "attempt  made  retried       min    median       max  next wave peak/s"
    )?;
    for row in &report.schedule {
        let delay = row
            .delay
            .map(|d| [d.min_ms, d.median_ms, d.max_ms].map(human));
        let [min, median, max] = delay.unwrap_or_else(|| ["-", "-", "-"].map(String::from));
        let (n, made, retried) = (row.attempt, row.attempts, row.retried);
        let peak = row.wave_peak_per_second;
        writeln!(
            out,
            "{n:>7} {made:>5} {retried:>8} {min:>9} {median:>9} {max:>9} {peak:>17}"
        )?;
    }
    let dead: Vec<String> = report
        .dead
        .iter()
        .map(|(r, n)| format!("{n} {r}"))
        .collect();
    let dead = if dead.is_empty() {
        "0".to_owned()
    } else {
        dead.join(", ")
    };
    let last = report
        .last_delivery_ms
        .map_or_else(|| "never".to_owned(), human);
    writeln!(out, "\ndelivered {}, dead {dead}", report.delivered)?;
    writeln!(out, "last delivery at {last}")?;
    let histogram = report.histogram(TEXT_BUCKETS);
    let top = histogram.counts.iter().copied().max().unwrap_or(0).max(1);
    let (retries, width) = (report.retries(), human(histogram.bucket_ms));
    writeln!(
        out,
        "\nretry arrivals ({retries} retries, {width} a row; busiest second)"
    )?;
    for (i, (count, peak)) in histogram.counts.iter().zip(&histogram.peaks).enumerate() {
        let at = human(i as u64 * histogram.bucket_ms);
        if *count == 0 {
            writeln!(out, "{at:>8} │")?;
            continue;
        }
        let bar = match usize::try_from(count * BAR_WIDTH / top).unwrap_or(0) {
            0 => "▏".to_owned(),
            cells => "█".repeat(cells),
        };
        writeln!(out, "{at:>8} │{bar:<50} {count:>6}  {peak:>5}/s")?;
    }
    let (peak, at) = (report.peak_per_second, human(report.peak_second * 1_000));
    let mean = match report.mean_per_second {
        small if small < 0.1 => format!("{small:.3}"),
        mean => format!("{mean:.1}"),
    };
    writeln!(out, "\npeak {peak}/s at {at}; mean {mean}/s")?;
    writeln!(out, "herd ratio (peak / mean) {:.1}", report.herd_ratio)?;
    let recovery = report.recovery_peak_per_second;
    writeln!(out, "busiest second after the outage: {recovery}/s")?;
    Ok(out)
}

/// The same histogram as a self-contained SVG: bars, axes with labels, and a title.
pub(super) fn render_svg(report: &SimulationReport) -> Result<String, fmt::Error> {
    const LEFT: f64 = 70.0;
    const TOP: f64 = 60.0;
    const PLOT_W: f64 = 800.0;
    const PLOT_H: f64 = 300.0;
    let histogram = report.histogram(SVG_BUCKETS);
    let peak = histogram.counts.iter().copied().max().unwrap_or(0).max(1);
    let columns = histogram.counts.len().max(1);
    let (cfg, bar_w) = (&report.config, PLOT_W / columns as f64);
    let mut svg = String::from(concat!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="900" height="420" "#,
        r#"font-family="sans-serif" font-size="12">"#,
        "\n",
        r#"<rect width="100%" height="100%" fill="white"/>"#,
        "\n"
    ));
    let text = |svg: &mut String, x: f64, y: f64, anchor: &str, body: &str| {
        writeln!(
            svg,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{body}</text>"#
        )
    };
    let (outage, events) = (human(cfg.outage_ms), cfg.events);
    let title = format!(
        "{}: {events} deliveries, {outage} outage",
        headline(&cfg.policy)
    );
    text(&mut svg, LEFT, 22.0, "start", &title)?;
    let (retries, width) = (report.retries(), human(histogram.bucket_ms));
    let (top, ratio) = (report.peak_per_second, report.herd_ratio);
    let recovery = report.recovery_peak_per_second;
    let subtitle = format!(
        "peak {top}/s, herd ratio {ratio:.1}, after the outage {recovery}/s; \
         {retries} retries, {width} a bar"
    );
    text(&mut svg, LEFT, 42.0, "start", &subtitle)?;
    for (i, count) in histogram.counts.iter().enumerate() {
        let h = *count as f64 / peak as f64 * PLOT_H;
        let (x, y, w) = (
            LEFT + i as f64 * bar_w,
            TOP + PLOT_H - h,
            (bar_w * 0.9).max(0.5),
        );
        let rect = format!(r#"x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}""#);
        writeln!(svg, r##"<rect {rect} fill="#4c78a8"/>"##)?;
    }
    let (bottom, right) = (TOP + PLOT_H, LEFT + PLOT_W);
    writeln!(
        svg,
        r#"<path d="M{LEFT} {TOP}V{bottom}H{right}" stroke="black" fill="none"/>"#
    )?;
    let mut labels = vec![(peak, TOP), (peak / 2, TOP + PLOT_H / 2.0), (0, bottom)];
    labels.dedup_by_key(|(value, _)| *value);
    for (value, y) in labels {
        text(&mut svg, LEFT - 6.0, y + 4.0, "end", &value.to_string())?;
    }
    let mut ticks: Vec<usize> = (0..=5).map(|tick| (columns * tick).div_ceil(5)).collect();
    ticks.dedup();
    for column in ticks {
        let at = human(histogram.bucket_ms * column as u64);
        let x = LEFT + column as f64 * bar_w;
        text(&mut svg, x, bottom + 18.0, "middle", &at)?;
    }
    let label = "retries per bar, by time since the deliveries first failed";
    text(
        &mut svg,
        LEFT + PLOT_W / 2.0,
        bottom + 40.0,
        "middle",
        label,
    )?;
    svg.push_str("</svg>\n");
    Ok(svg)
}

/// The preset, strategy and jitter, e.g. `preset default, exponential 1s ×2, jitter equal`.
pub(super) fn headline(policy: &EffectivePolicy) -> String {
    let strategy = match &policy.strategy {
        Strategy::Exponential { base_ms, factor } => {
            format!("exponential {} ×{factor}", human(*base_ms))
        }
        Strategy::Linear { base_ms, step_ms } => {
            format!("linear {} +{}", human(*base_ms), human(*step_ms))
        }
        Strategy::Fixed { base_ms } => format!("fixed {}", human(*base_ms)),
        Strategy::Schedule { schedule_ms } => {
            let steps: Vec<String> = schedule_ms.iter().map(|ms| human(*ms)).collect();
            format!("schedule {}", steps.join(", "))
        }
    };
    let jitter = match policy.jitter.ratio() {
        Some(ratio) => format!("{} {ratio}", policy.jitter.kind().as_str()),
        None => policy.jitter.kind().as_str().to_owned(),
    };
    format!("preset {}, {strategy}, jitter {jitter}", policy.preset)
}

/// A short human duration: `850ms`, `12.5s`, `4m15s`, `2h05m`, `1d03h`.
pub(super) fn human(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    if ms == 0 {
        return "0s".to_owned();
    }
    if ms < 1_000 {
        return format!("{ms}ms");
    }
    if ms < 60_000 {
        let tenths = ms / 100;
        return match tenths % 10 {
            0 => format!("{}s", tenths / 10),
            t => format!("{}.{t}s", tenths / 10),
        };
    }
    let (big, name) = UNITS
        .into_iter()
        .find(|(unit, _)| ms >= *unit)
        .unwrap_or(UNITS[3]);
    let (small, small_name) = UNITS
        .into_iter()
        .find(|(unit, _)| *unit < big)
        .unwrap_or(UNITS[3]);
    match ms % big / small {
        0 => format!("{}{name}", ms / big),
        rest => format!("{}{name}{rest:02}{small_name}", ms / big),
    }
}
