//! What every plot of the lab shares: text in an embedded 8×8 bitmap font (no font files on
//! the machine are needed) and the PNG file. The charts themselves are drawn with plotters
//! into an RGB buffer of `w × h` pixels.

use std::fs::File;
use std::path::Path;

/// Draws ASCII text in black into an RGB buffer of `w × h` pixels, `scale` pixels per font
/// pixel; what falls outside is clipped.
pub fn draw_text(buf: &mut [u8], (w, h): (u32, u32), x: i32, y: i32, s: &str, scale: i32) {
    for (i, ch) in s.chars().enumerate() {
        let glyph = font8x8::legacy::BASIC_LEGACY[(ch as usize) & 0x7f];
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) == 0 {
                    continue;
                }
                for dy in 0..scale {
                    for dx in 0..scale {
                        let px = x + (i as i32 * 8 + col) * scale + dx;
                        let py = y + row as i32 * scale + dy;
                        if (0..w as i32).contains(&px) && (0..h as i32).contains(&py) {
                            let at = ((py as u32 * w + px as u32) * 3) as usize;
                            buf[at..at + 3].copy_from_slice(&[0, 0, 0]);
                        }
                    }
                }
            }
        }
    }
}

/// Writes an RGB buffer of `w × h` pixels to `path` as a PNG file.
pub fn write_png(path: &Path, buf: &[u8], (w, h): (u32, u32)) -> Result<(), String> {
    let file = File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut wr| wr.write_image_data(buf))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_drawn_in_black_and_clipped() {
        const SIZE: (u32, u32) = (64, 32);
        let mut buf = vec![255u8; 64 * 32 * 3];
        draw_text(&mut buf, SIZE, 10, 10, "A1", 1);
        assert!(buf.chunks(3).any(|p| p == [0, 0, 0]));
        let mut blank = vec![255u8; 64 * 32 * 3];
        draw_text(&mut blank, SIZE, 10, 10, " ", 1);
        draw_text(&mut blank, SIZE, 100, 100, "far outside", 2);
        assert!(blank.iter().all(|&b| b == 255));
    }

    #[test]
    fn a_png_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.png");
        write_png(&path, &[255u8; 4 * 2 * 3], (4, 2)).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(write_png(&dir.path().join("no/such/dir.png"), &[0; 3], (1, 1)).is_err());
    }
}
