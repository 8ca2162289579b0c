//! Writing a tensor as a `.npy` file (format 1.0; 2.0 when the header
//! outgrows 64 KiB), readable by `numpy.load`.

use super::{Tensor, TensorError};

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
