//! Fig. 9 of Pan et al. (NB-Cache) drawn to a PNG file: four panels against the load
//! `rho = lambda / mu` (packets in the system, packets waiting, loss, server utilization), one
//! line per case from the models, the simulation's points as squares.

use std::path::Path;

use super::bypass::{fig9_loads, Fig9Case, Fig9Figures, Fig9Point};
use crate::plot::{draw_text, write_png};

const W: u32 = 1000;
const H: u32 = 760;

/// Colours of the cases, in order.
const COLOURS: [(u8, u8, u8); 4] = [(200, 30, 30), (230, 140, 0), (30, 120, 30), (30, 60, 200)];

/// One panel: its title and the figure it shows.
type Panel = (&'static str, fn(&Fig9Figures) -> f64);

const PANELS: [Panel; 4] = [
    ("(a) packets in the system", |f| f.in_system),
    ("(b) packets waiting", |f| f.waiting),
    ("(c) packet loss rate", |f| f.loss),
    ("(d) server utilization", |f| f.utilization),
];

/// Draws the sweep `all` (one vector of points per case of `cases`) to `path`.
pub(super) fn plot(path: &Path, cases: &[Fig9Case], all: &[Vec<Fig9Point>]) -> Result<(), String> {
    use plotters::prelude::*;
    let x1 = fig9_loads().last().copied().unwrap_or(5.0);
    let mut buf = vec![255u8; (W * H * 3) as usize];
    let mut labels: Vec<(i32, i32, String)> = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| format!("plot: {e:?}");
        let (_, body) = root.split_vertically(40);
        for (panel, area) in PANELS.iter().zip(body.split_evenly((2, 2))) {
            let y1 = nice_top(
                all.iter()
                    .flatten()
                    .flat_map(|p| {
                        std::iter::once(panel.1(&p.model)).chain(p.simulated.as_ref().map(panel.1))
                    })
                    .fold(0.0f64, f64::max),
            );
            let mut chart = ChartBuilder::on(&area)
                .margin(24)
                .x_label_area_size(20)
                .y_label_area_size(44)
                .build_cartesian_2d(0.0..x1, 0.0..y1)
                .map_err(e)?;
            // Frame and grid by hand: plotters' mesh would draw text, and no font is registered.
            let grey = RGBColor(220, 220, 220);
            for i in 1..5 {
                let y = y1 * f64::from(i) / 5.0;
                chart
                    .draw_series(LineSeries::new([(0.0, y), (x1, y)], grey))
                    .map_err(e)?;
            }
            chart
                .draw_series(LineSeries::new(
                    [(0.0, 0.0), (x1, 0.0), (x1, y1), (0.0, y1), (0.0, 0.0)],
                    BLACK,
                ))
                .map_err(e)?;
            for (k, points) in all.iter().enumerate() {
                let (r, g, b) = COLOURS[k % COLOURS.len()];
                let colour = RGBColor(r, g, b);
                let line: Vec<(f64, f64)> =
                    points.iter().map(|p| (p.rho, panel.1(&p.model))).collect();
                chart
                    .draw_series(LineSeries::new(line, colour.stroke_width(2)))
                    .map_err(e)?;
                let (dx, dy) = (x1 / 150.0, y1 / 110.0);
                chart
                    .draw_series(points.iter().filter_map(|p| {
                        let y = p.simulated.as_ref().map(panel.1)?;
                        Some(Rectangle::new(
                            [(p.rho - dx, y - dy), (p.rho + dx, y + dy)],
                            colour.filled(),
                        ))
                    }))
                    .map_err(e)?;
            }
            let (px, py) = chart.backend_coord(&(0.0, y1));
            labels.push((px + 4, py - 14, panel.0.to_string()));
            for i in 0..=5 {
                let y = y1 * f64::from(i) / 5.0;
                let (px, py) = chart.backend_coord(&(0.0, y));
                labels.push((px - 44, py - 4, format!("{y:.2}")));
            }
            for i in 0..=5 {
                let x = x1 * f64::from(i) / 5.0;
                let (px, py) = chart.backend_coord(&(x, 0.0));
                labels.push((px - 8, py + 6, format!("{x}")));
            }
        }
        root.present().map_err(e)?;
    }
    let title = "Fig. 9 (Pan et al., NB-Cache): N-queue bypass vs M/M/1 with drop threshold, \
                 against rho = lambda/mu";
    draw_text(&mut buf, (W, H), 10, 6, title, 1);
    let mut x = 10;
    for (k, c) in cases.iter().enumerate() {
        let (r, g, b) = COLOURS[k % COLOURS.len()];
        swatch(&mut buf, x, 22, [r, g, b]);
        draw_text(&mut buf, (W, H), x + 22, 22, c.name, 1);
        x += 22 + 8 * c.name.len() as i32 + 24;
    }
    draw_text(
        &mut buf,
        (W, H),
        x,
        22,
        "lines: model; squares: simulation",
        1,
    );
    for (x, y, s) in labels {
        draw_text(&mut buf, (W, H), x, y, &s, 1);
    }
    write_png(path, &buf, (W, H))
}

/// The top of a y axis of 5 steps of 1, 2 or 2.5 times a power of ten above `max`.
fn nice_top(max: f64) -> f64 {
    let max = max.max(1e-9);
    let mut unit = 10f64.powf((max / 5.0).log10().floor());
    loop {
        for m in [1.0, 2.0, 2.5, 5.0] {
            if 5.0 * m * unit >= max * 1.02 {
                return 5.0 * m * unit;
            }
        }
        unit *= 10.0;
    }
}

/// A 16×8 block of colour at (x, y).
fn swatch(buf: &mut [u8], x: i32, y: i32, rgb: [u8; 3]) {
    for py in y..y + 8 {
        for px in x..x + 16 {
            let at = ((py as u32 * W + px as u32) * 3) as usize;
            buf[at..at + 3].copy_from_slice(&rgb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_end_on_round_numbers_above_the_data() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        assert!(near(nice_top(0.8), 1.0));
        assert!(near(nice_top(10.0), 12.5));
        assert!(near(nice_top(7.2), 10.0));
        assert!(nice_top(0.0) > 0.0);
        for x in [0.013, 0.6, 3.3, 47.0, 999.0] {
            let top = nice_top(x);
            assert!(top >= x && top <= 2.6 * x, "{x} -> {top}");
        }
    }
}
