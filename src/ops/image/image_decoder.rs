//! `ImageDecoder` (opset 20): a 1-D uint8 tensor of encoded image bytes
//! (BMP, JPEG, JPEG 2000, PNG, PNM, TIFF or WebP, recognised by content)
//! decoded to a uint8 `[H, W, C]` tensor, `C` = 3 for `pixel_format` RGB or
//! BGR and 1 for Grayscale.
//!
//! Grayscale is computed from the decoded RGB pixels with ITU-R 601-2 luma
//! weights in 16-bit fixed point (L = (19595 R + 38470 G + 7471 B + 2^15) >>
//! 16), the conversion Pillow applies and the ONNX reference uses.
//! Alpha is dropped. Hostile input gives a kernel error: truncated or
//! corrupt data is reported by the decoder, and an image whose declared size
//! is over [`MAX_PIXELS`] or the memory budget is refused before decoding.

use crate::bail;
use crate::expr::Expr;
use crate::ops::kernel::{tensor_in, Kernel, KernelError, NodeInfo};
use crate::ops::Attrs;
use crate::ops::{InferCtx, ShapeError};
use crate::tensor::{DataType, Tensor, Value};
use ndarray::{ArrayD, IxDyn};

use super::jpeg_sequential as jpeg;

/// Largest accepted image, in pixels (2^28: a 16384 x 16384 image).
const MAX_PIXELS: u64 = 1 << 28;

#[derive(Clone, Copy, Debug, PartialEq)]
enum PixelFormat {
    Rgb,
    Bgr,
    Grayscale,
}

impl PixelFormat {
    fn channels(self) -> usize {
        match self {
            PixelFormat::Grayscale => 1,
            _ => 3,
        }
    }
}

struct ImageDecoderAttrs {
    pixel_format: PixelFormat,
}

impl ImageDecoderAttrs {
    fn decode(a: &Attrs) -> Result<Self, String> {
        let pf = a
            .string_checked("pixel_format")
            .map_err(|e| e.to_string())?
            .unwrap_or_else(|| "RGB".to_string());
        let pixel_format = match pf.as_str() {
            "RGB" => PixelFormat::Rgb,
            "BGR" => PixelFormat::Bgr,
            "Grayscale" => PixelFormat::Grayscale,
            other => {
                return Err(format!(
                    "ImageDecoder: pixel_format must be RGB, BGR or Grayscale, got '{other}'"
                ))
            }
        };
        Ok(ImageDecoderAttrs { pixel_format })
    }
}

pub fn shape(cx: &mut InferCtx) -> Result<(), ShapeError> {
    let a = ImageDecoderAttrs::decode(&cx.attrs).map_err(ShapeError::new)?;
    let e = cx.elem_req(0)?;
    if e != DataType::Uint8 {
        return Err(ShapeError::new(format!(
            "ImageDecoder: encoded_stream must be uint8, got {e}"
        )));
    }
    if let Some(r) = cx.rank(0) {
        if r != 1 {
            return Err(ShapeError::new(format!(
                "ImageDecoder: encoded_stream must be 1-D, got rank {r}"
            )));
        }
    }
    let c = Expr::int(a.pixel_format.channels() as i64);
    cx.set_tensor(0, DataType::Uint8, Some(vec![None, None, Some(c)]));
    Ok(())
}

pub fn kernel(info: &NodeInfo) -> Result<Kernel, KernelError> {
    let a = ImageDecoderAttrs::decode(&info.attrs).map_err(KernelError::new)?;
    Ok(Box::new(move |_, ins| {
        let t = tensor_in(ins, 0)?;
        let bytes = match t {
            Tensor::U8(x) if x.ndim() == 1 => x.iter().copied().collect::<Vec<u8>>(),
            Tensor::U8(x) => bail!(
                "ImageDecoder: encoded_stream must be 1-D, got shape {:?}",
                x.shape()
            ),
            other => bail!(
                "ImageDecoder: encoded_stream must be uint8, got {}",
                other.dtype()
            ),
        };
        let (h, w, rgb) = decode_rgb8(&bytes)?;
        let c = a.pixel_format.channels();
        let out: Vec<u8> = match a.pixel_format {
            PixelFormat::Rgb => rgb,
            PixelFormat::Bgr => rgb
                .chunks_exact(3)
                .flat_map(|p| [p[2], p[1], p[0]])
                .collect(),
            PixelFormat::Grayscale => rgb.chunks_exact(3).map(luma).collect(),
        };
        let arr = ArrayD::from_shape_vec(IxDyn(&[h, w, c]), out)?;
        Ok(vec![Value::Tensor(Tensor::U8(arr))])
    }))
}

/// ITU-R 601-2 luma of one RGB pixel, in Pillow's fixed point.
fn luma(p: &[u8]) -> u8 {
    let (r, g, b) = (p[0] as u32, p[1] as u32, p[2] as u32);
    ((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16) as u8
}

/// Refuses a declared size over [`MAX_PIXELS`] or the memory budget.
fn check_size(w: u64, h: u64) -> Result<(), KernelError> {
    if w == 0 || h == 0 {
        bail!("ImageDecoder: the image is empty ({w} x {h})");
    }
    match w.checked_mul(h) {
        Some(n) if n <= MAX_PIXELS => {}
        _ => bail!("ImageDecoder: a {w} x {h} image is over the limit of {MAX_PIXELS} pixels"),
    }
    // decoding may hold up to 16 bytes per pixel (RGBA, 32-bit samples)
    crate::tensor::budget::check(&[w as usize, h as usize], 16)?;
    Ok(())
}

/// Decodes any supported format to (height, width, packed RGB8).
fn decode_rgb8(bytes: &[u8]) -> Result<(usize, usize, Vec<u8>), KernelError> {
    if is_jpeg2000(bytes) {
        return decode_jpeg2000(bytes);
    }
    if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        let check = |w: u64, h: u64| check_size(w, h).map_err(|e| e.to_string());
        match jpeg::decode(bytes, &check) {
            Ok(jpeg::Decoded::Rgb(h, w, rgb)) => return Ok((h, w, rgb)),
            // progressive, CMYK...: the general decoder below
            Ok(jpeg::Decoded::Unsupported) => {}
            Err(e) => bail!("ImageDecoder: cannot decode the image: {e}"),
        }
    }
    let reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| KernelError::new(format!("ImageDecoder: cannot read the stream: {e}")))?;
    if reader.format().is_none() {
        bail!(
            "ImageDecoder: unrecognised image format (supported: BMP, JPEG, JPEG 2000, PNG, PNM, TIFF, WebP)"
        );
    }
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| KernelError::new(format!("ImageDecoder: cannot read the header: {e}")))?;
    check_size(w as u64, h as u64)?;
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| KernelError::new(format!("ImageDecoder: cannot read the stream: {e}")))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(w);
    limits.max_image_height = Some(h);
    limits.max_alloc = Some(MAX_PIXELS * 16);
    reader.limits(limits);
    let img = reader
        .decode()
        .map_err(|e| KernelError::new(format!("ImageDecoder: cannot decode the image: {e}")))?;
    let rgb = img.into_rgb8();
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    Ok((h, w, rgb.into_raw()))
}

fn is_jpeg2000(b: &[u8]) -> bool {
    b.starts_with(b"\x00\x00\x00\x0C\x6A\x50\x20\x20") || b.starts_with(b"\xFF\x4F\xFF\x51")
}

fn decode_jpeg2000(bytes: &[u8]) -> Result<(usize, usize, Vec<u8>), KernelError> {
    use hayro_jpeg2000::{ColorSpace, DecodeSettings, DecoderContext, Image};
    let err = |e: hayro_jpeg2000::DecodeError| {
        KernelError::new(format!(
            "ImageDecoder: cannot decode the JPEG 2000 image: {e}"
        ))
    };
    let img = Image::new(bytes, &DecodeSettings::default()).map_err(err)?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    check_size(w as u64, h as u64)?;
    let nc = img.color_space().num_channels() as usize + usize::from(img.has_alpha());
    let gray = matches!(img.color_space(), ColorSpace::Gray);
    let rgb_like = matches!(img.color_space(), ColorSpace::RGB)
        || matches!(
            img.color_space(),
            ColorSpace::Icc {
                num_channels: 3,
                ..
            }
        );
    if !gray && !rgb_like {
        bail!(
            "ImageDecoder: JPEG 2000 color space {:?} is not supported (gray or RGB only)",
            img.color_space()
        );
    }
    let mut ctx = DecoderContext::default();
    let decoded = img.decode(&mut ctx).map_err(err)?;
    let data = decoded.data_u8();
    if data.len() != w * h * nc {
        bail!(
            "ImageDecoder: the JPEG 2000 decoder returned {} bytes for a {w} x {h} x {nc} image",
            data.len()
        );
    }
    let rgb: Vec<u8> = if gray {
        data.chunks_exact(nc)
            .flat_map(|p| [p[0], p[0], p[0]])
            .collect()
    } else {
        data.chunks_exact(nc)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect()
    };
    Ok((h, w, rgb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luma_matches_fixed_point_weights() {
        assert_eq!(luma(&[255, 255, 255]), 255);
        assert_eq!(luma(&[0, 0, 0]), 0);
        assert_eq!(luma(&[255, 0, 0]), 76);
        assert_eq!(luma(&[0, 255, 0]), 150);
        assert_eq!(luma(&[0, 0, 255]), 29);
    }

    #[test]
    fn hostile_streams_are_errors() {
        // empty, garbage, truncated PNG signature, JPEG 2000 signature only
        for b in [
            &b""[..],
            &b"not an image at all"[..],
            &b"\x89PNG\r\n\x1a\n\x00\x00"[..],
            &b"\xFF\x4F\xFF\x51\x00"[..],
            &b"\xFF\xD8\xFF\xE0\x00\x10JFIF"[..],
        ] {
            assert!(decode_rgb8(b).is_err(), "{b:?}");
        }
    }

    #[test]
    fn absurd_declared_size_is_refused_before_decoding() {
        // a PPM header declaring 100000 x 100000 pixels and no data
        let b = b"P6\n100000 100000\n255\n";
        let e = decode_rgb8(b).unwrap_err();
        assert!(e.to_string().contains("over the limit"), "{e}");
    }

    #[test]
    fn ppm_decodes_exactly() {
        let mut b = b"P6\n2 1\n255\n".to_vec();
        b.extend_from_slice(&[10, 20, 30, 40, 50, 60]);
        let (h, w, rgb) = decode_rgb8(&b).unwrap();
        assert_eq!((h, w), (1, 2));
        assert_eq!(rgb, vec![10, 20, 30, 40, 50, 60]);
    }
}
