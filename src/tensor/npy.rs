//! `.npy` files: reading (format versions 1–3, C or Fortran order) and
//! writing (format 1.0; 2.0 when the header outgrows 64 KiB), readable by
//! `numpy.load`.

use super::{DataType, Tensor, TensorError};

/// The `.npy` bytes of a tensor, in C order. Strings become numpy's
/// fixed-width UTF-32 (`<Un`); bfloat16 and the sub-byte and 8-bit float
/// types have no numpy type and are refused.
pub fn write_npy(t: &Tensor) -> Result<Vec<u8>, TensorError> {
    let (descr, data): (String, Vec<u8>) = match t {
        Tensor::F32(a) => ("<f4".into(), le(a, |v| v.to_le_bytes())),
        Tensor::F64(a) => ("<f8".into(), le(a, |v| v.to_le_bytes())),
        Tensor::F16(a) => ("<f2".into(), le(a, |v| v.to_le_bytes())),
        Tensor::I8(a) => ("|i1".into(), le(a, |v| v.to_le_bytes())),
        Tensor::I16(a) => ("<i2".into(), le(a, |v| v.to_le_bytes())),
        Tensor::I32(a) => ("<i4".into(), le(a, |v| v.to_le_bytes())),
        Tensor::I64(a) => ("<i8".into(), le(a, |v| v.to_le_bytes())),
        Tensor::U8(a) => ("|u1".into(), le(a, |v| v.to_le_bytes())),
        Tensor::U16(a) => ("<u2".into(), le(a, |v| v.to_le_bytes())),
        Tensor::U32(a) => ("<u4".into(), le(a, |v| v.to_le_bytes())),
        Tensor::U64(a) => ("<u8".into(), le(a, |v| v.to_le_bytes())),
        Tensor::Bool(a) => ("|b1".into(), le(a, |v| [v as u8])),
        Tensor::Str(a) => {
            let width = a
                .iter()
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
                .max(1);
            let mut data = Vec::with_capacity(a.len() * width * 4);
            for s in a.iter() {
                let n = s.chars().count();
                for c in s.chars() {
                    data.extend((c as u32).to_le_bytes());
                }
                data.resize(data.len() + (width - n) * 4, 0);
            }
            (format!("<U{width}"), data)
        }
        Tensor::BF16(_) | Tensor::Small { .. } => {
            return Err(TensorError::new(format!(
                "{} has no .npy type (cast it to float first)",
                t.dtype()
            )))
        }
    };
    let shape = match t.shape() {
        [d] => format!("({d},)"),
        s => format!(
            "({})",
            s.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // magic, version, header length, then the dict padded with spaces and
    // ended by a newline so the data starts on a multiple of 64 bytes
    let (version, len_bytes) = if dict.len() + 11 < 65_536 {
        (1u8, 2)
    } else {
        (2u8, 4)
    };
    let pre = 6 + 2 + len_bytes;
    let total = (pre + dict.len() + 1).div_ceil(64) * 64;
    let header_len = total - pre;
    let mut out = Vec::with_capacity(total + data.len());
    out.extend(b"\x93NUMPY");
    out.extend([version, 0]);
    if version == 1 {
        out.extend((header_len as u16).to_le_bytes());
    } else {
        out.extend((header_len as u32).to_le_bytes());
    }
    out.extend(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out.extend(data);
    Ok(out)
}

/// Reads a `.npy` file (format versions 1–3, C or Fortran order).
pub fn read_npy(bytes: &[u8]) -> Result<Tensor, TensorError> {
    read_npy_text_errors(bytes).map_err(TensorError::new)
}

fn read_npy_text_errors(bytes: &[u8]) -> Result<Tensor, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file".into());
    }
    let major = bytes[6];
    let (hlen, start): (usize, usize) = if major == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        if bytes.len() < 12 {
            return Err("truncated .npy header".into());
        }
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let end = start
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or("truncated .npy header")?;
    let header = String::from_utf8_lossy(&bytes[start..end]).to_string();
    let field = |key: &str| -> Option<String> {
        let i = header.find(&format!("'{key}'"))?;
        let rest = &header[i + key.len() + 2..];
        let rest = rest.trim_start().strip_prefix(':')?.trim_start();
        if let Some(r) = rest.strip_prefix('\'') {
            Some(r[..r.find('\'')?].to_string())
        } else if rest.starts_with('(') {
            Some(rest[1..rest.find(')')?].to_string())
        } else {
            Some(rest.split([',', '}']).next()?.trim().to_string())
        }
    };
    let descr = field("descr").ok_or("no 'descr' in the .npy header")?;
    let fortran = field("fortran_order").is_some_and(|v| v == "True");
    let shape: Vec<usize> = field("shape")
        .ok_or("no 'shape' in the .npy header")?
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("bad shape entry '{s}'"))
        })
        .collect::<Result<_, String>>()?;
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or("absurd shape")?;
    let data = &bytes[end..];
    if descr.starts_with('>') {
        return Err(format!("big-endian .npy data ({descr}) is not supported"));
    }
    let code = descr.trim_start_matches(['<', '|', '=']);
    let dt = match code {
        "f4" => DataType::Float,
        "f8" => DataType::Double,
        "f2" => DataType::Float16,
        "i1" => DataType::Int8,
        "i2" => DataType::Int16,
        "i4" => DataType::Int32,
        "i8" => DataType::Int64,
        "u1" => DataType::Uint8,
        "u2" => DataType::Uint16,
        "u4" => DataType::Uint32,
        "u8" => DataType::Uint64,
        "b1" => DataType::Bool,
        other => return Err(format!(".npy dtype '{other}' is not supported")),
    };
    let size = dt.byte_size().unwrap_or(1);
    if data.len() < n * size {
        return Err(format!(
            ".npy data holds {} bytes, shape {shape:?} needs {}",
            data.len(),
            n * size
        ));
    }
    let dims: Vec<usize> = if fortran {
        shape.iter().rev().copied().collect()
    } else {
        shape.clone()
    };
    let raw = bytes::Bytes::from(data[..n * size].to_vec());
    let t = Tensor::from_le_bytes(dt, &dims, &raw).map_err(|e| e.0)?;
    if fortran {
        let r = t.rank();
        let perm: Vec<usize> = (0..r).rev().collect();
        return Ok(crate::map_array!(&t, a => a
            .view()
            .permuted_axes(ndarray::IxDyn(&perm))
            .as_standard_layout()
            .into_owned()));
    }
    Ok(t)
}

/// The elements' little-endian bytes in C order.
fn le<T: Copy, const N: usize>(a: &ndarray::ArrayD<T>, f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len() * N);
    for &v in a.iter() {
        out.extend(f(v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_and_data_follows() {
        let t = Tensor::from_vec(&[2, 3], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
        let b = write_npy(&t).unwrap();
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
        assert!(header.starts_with("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(header.ends_with('\n'));
        assert_eq!(&b[10 + hlen..10 + hlen + 8], &1i64.to_le_bytes());
        assert_eq!(b.len(), 10 + hlen + 48);
    }

    #[test]
    fn what_is_written_reads_back() {
        let t = Tensor::from_vec(&[2, 2], vec![1.5f32, -2.0, 0.0, 7.25]).unwrap();
        assert_eq!(read_npy(&write_npy(&t).unwrap()).unwrap(), t);
    }

    #[test]
    fn strings_are_fixed_width_utf32() {
        let t = Tensor::from_vec(&[2], vec!["ab".to_string(), "é".to_string()]).unwrap();
        let b = write_npy(&t).unwrap();
        let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert!(std::str::from_utf8(&b[10..10 + hlen])
            .unwrap()
            .contains("'<U2'"));
        let data = &b[10 + hlen..];
        assert_eq!(data.len(), 16);
        assert_eq!(&data[8..12], &('é' as u32).to_le_bytes());
        assert_eq!(&data[12..16], &[0, 0, 0, 0]);
    }
}
