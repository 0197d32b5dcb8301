//! The runs drawn to a PNG file: throughput (left) and mean RTT (right), one bar per run, as
//! Pan et al.'s Fig. 19 and 16; with `--sweep threshold`, both against the threshold, as their
//! Fig. 20.

use std::path::Path;

use super::report::Row;
use crate::plot::draw_text;

const W: u32 = 900;
const H: u32 = 480;

/// One panel: bars (or a line over the threshold) of `value` per row.
fn panel(
    area: &plotters::drawing::DrawingArea<
        plotters::prelude::BitMapBackend<'_>,
        plotters::coord::Shift,
    >,
    rows: &[Row],
    sweep: bool,
    value: impl Fn(&Row) -> f64,
    labels: &mut Vec<(i32, i32, String, bool)>,
) -> Result<(), String> {
    use plotters::prelude::*;
    let e = |e: DrawingAreaErrorKind<_>| format!("plot: {e:?}");
    let top = rows.iter().map(&value).fold(0.0f64, f64::max).max(1e-9) * 1.15;
    let n = rows.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .margin(40)
        .x_label_area_size(30)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..n, 0.0..top)
        .map_err(e)?;
    let grey = RGBColor(220, 220, 220);
    for i in 1..=4 {
        let y = top * f64::from(i) / 4.0;
        chart
            .draw_series(LineSeries::new([(0.0, y), (n, y)], grey))
            .map_err(e)?;
        let (px, py) = chart.backend_coord(&(0.0, y));
        labels.push((px - 58, py - 4, format!("{y:.0}"), false));
    }
    chart
        .draw_series(LineSeries::new(
            [(0.0, 0.0), (n, 0.0), (n, top), (0.0, top), (0.0, 0.0)],
            BLACK,
        ))
        .map_err(e)?;
    if sweep {
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64 + 0.5, value(r)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), BLUE.stroke_width(2)))
            .map_err(e)?;
        chart
            .draw_series(
                pts.iter()
                    .map(|&(x, y)| Circle::new((x, y), 4, BLUE.filled())),
            )
            .map_err(e)?;
    } else {
        chart
            .draw_series(rows.iter().enumerate().map(|(i, r)| {
                let x = i as f64;
                Rectangle::new([(x + 0.2, 0.0), (x + 0.8, value(r))], BLUE.filled())
            }))
            .map_err(e)?;
    }
    for (i, r) in rows.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        let name = if sweep {
            r.threshold.to_string()
        } else {
            r.case.to_string()
        };
        labels.push((px - 4 * name.len() as i32, py + 8, name, false));
    }
    Ok(())
}

/// Draws `rows` to `path` (see the [module docs](self)).
pub(super) fn plot(path: &Path, scenario: &str, rows: &[Row], sweep: bool) -> Result<(), String> {
    use plotters::prelude::*;
    if rows.is_empty() {
        return Err("--plot: nothing ran".into());
    }
    let mut buf = vec![255u8; (W * H * 3) as usize];
    let mut labels = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        let (left, right) = root.split_horizontally(W / 2);
        panel(
            &left,
            rows,
            sweep,
            |r| r.trace.throughput_pps(),
            &mut labels,
        )?;
        panel(&right, rows, sweep, |r| r.trace.rtt_ms().0, &mut labels)?;
        root.present().map_err(|e| format!("plot: {e:?}"))?;
    }
    let x = if sweep { "threshold" } else { "case" };
    labels.push((60, 8, "throughput, Data/s".into(), true));
    labels.push((W as i32 / 2 + 60, 8, "mean RTT, ms".into(), true));
    labels.push((20, H as i32 - 20, format!("{scenario}: by {x}"), false));
    for (x, y, s, big) in labels {
        draw_text(&mut buf, (W, H), x, y, &s, if big { 2 } else { 1 });
    }
    crate::plot::write_png(path, &buf, (W, H))
}

#[cfg(test)]
mod tests {
    use super::super::consumer::TraceResult;
    use super::super::{Case, Cc};
    use super::*;

    #[test]
    fn bars_and_sweeps_are_drawn() {
        let row = |case, threshold, received| Row {
            case,
            cc: Cc::None,
            threshold,
            trace: TraceResult {
                received,
                data_seconds: 1.0,
                rtt_us: vec![1000 * received as u32],
                ..TraceResult::default()
            },
            routers: Vec::new(),
            namespaces: false,
            throttled: false,
            consumer_udp_drops: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let rows = [row(Case::A, 64, 10), row(Case::B, 64, 30)];
        for sweep in [false, true] {
            let p = dir.path().join(format!("e{sweep}.png"));
            plot(&p, "t", &rows, sweep).unwrap();
            assert_eq!(&std::fs::read(&p).unwrap()[1..4], b"PNG");
        }
        assert!(plot(&dir.path().join("x.png"), "t", &[], false).is_err());
    }
}
