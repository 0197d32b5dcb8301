//! The sweep drawn to a PNG file.

use std::path::Path;

use super::point::Point;
use crate::hcs_workload::WorkloadKind;
use crate::plot::draw_text;

const W: u32 = 800;
const H: u32 = 560;

/// Draws the sweep like Fig. 5(a) of Mansilha et al. (2017): L1 hit ratio against |L1| (log
/// scale), model as a line, measurements as squares. Labels use an embedded 8×8 bitmap font (no font files).
pub(super) fn plot(
    path: &Path,
    workload: WorkloadKind,
    points: &[Point],
    model_at: impl Fn(f64) -> f64,
    model_label: &str,
) -> Result<(), String> {
    use plotters::prelude::*;
    let (x0, x1) = (
        points.iter().map(|p| p.l1_chunks).min().unwrap_or(1).max(1) as f64 / 1.5,
        points.iter().map(|p| p.l1_chunks).max().unwrap_or(1) as f64 * 1.5,
    );
    let mut buf = vec![255u8; (W * H * 3) as usize];
    let mut labels: Vec<(i32, i32, String, bool)> = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| format!("plot: {e:?}");
        let mut chart = ChartBuilder::on(&root)
            .margin(30)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..1.05)
            .map_err(e)?;
        // Grid and frame by hand: plotters' mesh would draw text, and no font is registered.
        let grey = RGBColor(220, 220, 220);
        for i in 1..=5 {
            let y = f64::from(i) * 0.2;
            chart
                .draw_series(LineSeries::new([(x0, y), (x1, y)], grey))
                .map_err(e)?;
        }
        let mut t = 10f64.powf(x0.log10().ceil());
        while t <= x1 {
            chart
                .draw_series(LineSeries::new([(t, 0.0), (t, 1.05)], grey))
                .map_err(e)?;
            t *= 10.0;
        }
        chart
            .draw_series(LineSeries::new(
                [(x0, 0.0), (x1, 0.0), (x1, 1.05), (x0, 1.05), (x0, 0.0)],
                BLACK,
            ))
            .map_err(e)?;
        let model: Vec<(f64, f64)> = (0..=60)
            .map(|i| {
                let l1 = x0 * (x1 / x0).powf(f64::from(i) / 60.0);
                (l1, model_at(l1))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(model, BLUE.stroke_width(2)))
            .map_err(e)?;
        chart
            .draw_series(points.iter().map(|p| {
                let (x, y) = (p.l1_chunks as f64, p.hit_ratio());
                Rectangle::new([(x / 1.04, y - 0.012), (x * 1.04, y + 0.012)], RED.filled())
            }))
            .map_err(e)?;
        for i in 0..=5 {
            let y = f64::from(i) * 0.2;
            let (px, py) = chart.backend_coord(&(x0, y));
            labels.push((px - 34, py - 4, format!("{y:.1}"), false));
        }
        let mut t = 10f64.powf(x0.log10().ceil());
        while t <= x1 {
            let (px, py) = chart.backend_coord(&(t, 0.0));
            labels.push((px - 12, py + 10, format!("{t:.0}"), false));
            t *= 10.0;
        }
        root.present().map_err(e)?;
    }
    labels.push((
        200,
        8,
        format!("{workload}: L1 hit ratio vs |L1| (chunks)"),
        true,
    ));
    labels.push((440, 40, format!("-- {model_label}"), false));
    labels.push((440, 52, "[] measured".into(), false));
    for (x, y, s, big) in labels {
        draw_text(&mut buf, (W, H), x, y, &s, if big { 2 } else { 1 });
    }
    crate::plot::write_png(path, &buf, (W, H))
}
