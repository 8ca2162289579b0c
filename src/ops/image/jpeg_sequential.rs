//! Sequential (baseline and extended) Huffman JPEG decoding, 8-bit samples,
//! one (grayscale) or three (YCbCr or RGB) components, written from ITU-T
//! T.81 so that the pixels are those of libjpeg(-turbo) with its default
//! settings, which Pillow and so the ONNX reference use:
//!
//! * the "islow" integer inverse DCT (the Loeffler-Ligtenberg-Moschytz
//!   factorisation with 13-bit constants, 2 extra bits between the column
//!   and the row pass, results wrapped to 10 bits and then clamped);
//! * "fancy" (triangle filter) upsampling of chroma subsampled 2:1
//!   horizontally, vertically or both, replication for other integral
//!   factors, with the edges of each component repeated;
//! * YCbCr to RGB in 16-bit fixed point.
//!
//! Anything else (progressive, arithmetic coding, lossless, 12-bit, CMYK,
//! fractional sampling) is reported as [`Decoded::Unsupported`] so that the
//! caller can use another decoder. Corrupt or truncated data is an error.

/// The result of [`decode`].
pub(super) enum Decoded {
    /// Height, width and packed RGB8 pixels.
    Rgb(usize, usize, Vec<u8>),
    /// The stream uses a JPEG feature outside this decoder.
    Unsupported,
}

/// Position in the 8x8 block of the k-th coefficient in zig-zag order.
const ZIGZAG: [usize; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

struct Huffman {
    /// Number of codes of each length 1..=16 (index 0 unused).
    counts: [u16; 17],
    /// Symbols in order of increasing code.
    symbols: Vec<u8>,
    /// For each length: the first code, and the index of its symbol.
    first_code: [i32; 17],
    first_index: [i32; 17],
}

impl Huffman {
    fn new(counts: [u16; 17], symbols: Vec<u8>) -> Result<Self, String> {
        let mut first_code = [0i32; 17];
        let mut first_index = [0i32; 17];
        let (mut code, mut index) = (0i32, 0i32);
        for len in 1..=16 {
            first_code[len] = code;
            first_index[len] = index;
            let n = counts[len] as i32;
            code += n;
            index += n;
            if code > (1 << len) {
                return Err("JPEG: a Huffman table has more codes than fit".into());
            }
            code <<= 1;
        }
        Ok(Huffman {
            counts,
            symbols,
            first_code,
            first_index,
        })
    }
}

/// Reads the entropy-coded bits of one scan, removing stuffed zero bytes
/// and stopping at a marker. Never reads a bit it does not use, so running
/// out of data is truncation.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    acc: u32,
    n: u32,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8], pos: usize) -> Self {
        Bits {
            data,
            pos,
            acc: 0,
            n: 0,
        }
    }

    fn bit(&mut self) -> Result<u32, String> {
        if self.n == 0 {
            let b = match self.data.get(self.pos) {
                Some(&b) => b,
                None => return Err("JPEG: the data ends inside a scan (truncated)".into()),
            };
            if b == 0xFF {
                match self.data.get(self.pos + 1) {
                    Some(0x00) => self.pos += 2,
                    _ => {
                        return Err(
                            "JPEG: a marker interrupts the scan data (truncated or corrupt)".into(),
                        )
                    }
                }
            } else {
                self.pos += 1;
            }
            self.acc = b as u32;
            self.n = 8;
        }
        self.n -= 1;
        Ok((self.acc >> self.n) & 1)
    }

    fn bits(&mut self, count: u32) -> Result<i32, String> {
        let mut v = 0i32;
        for _ in 0..count {
            v = (v << 1) | self.bit()? as i32;
        }
        Ok(v)
    }

    /// A value of `size` bits, sign-extended as in T.81 F.2.2.1.
    fn extend(&mut self, size: u32) -> Result<i32, String> {
        if size == 0 {
            return Ok(0);
        }
        let v = self.bits(size)?;
        Ok(if v < (1 << (size - 1)) {
            v - (1 << size) + 1
        } else {
            v
        })
    }

    fn decode(&mut self, h: &Huffman) -> Result<u8, String> {
        let mut code = 0i32;
        for len in 1..=16 {
            code = (code << 1) | self.bit()? as i32;
            let n = h.counts[len] as i32;
            if code >= h.first_code[len] && code - h.first_code[len] < n {
                let i = (h.first_index[len] + code - h.first_code[len]) as usize;
                return h
                    .symbols
                    .get(i)
                    .copied()
                    .ok_or_else(|| "JPEG: a Huffman table is shorter than its counts".to_string());
            }
        }
        Err("JPEG: an invalid Huffman code in the scan data".into())
    }

    /// Drops the bits left in the current byte and reads the restart marker
    /// that must follow.
    fn restart(&mut self, expected: u8) -> Result<(), String> {
        self.n = 0;
        match (self.data.get(self.pos), self.data.get(self.pos + 1)) {
            (Some(0xFF), Some(&m)) if m == 0xD0 + expected => {
                self.pos += 2;
                Ok(())
            }
            _ => Err(format!(
                "JPEG: restart marker RST{expected} missing at byte {}",
                self.pos
            )),
        }
    }
}

struct Component {
    id: u8,
    h: usize,
    v: usize,
    tq: usize,
    /// Width and height in blocks of the stored plane (whole MCUs).
    bw: usize,
    bh: usize,
    /// Samples, `bw * 8` per row.
    plane: Vec<u8>,
    scanned: bool,
}

struct Frame {
    width: usize,
    height: usize,
    hmax: usize,
    vmax: usize,
    mcus_x: usize,
    mcus_y: usize,
    comps: Vec<Component>,
}

fn be16(d: &[u8], at: usize) -> Result<usize, String> {
    match (d.get(at), d.get(at + 1)) {
        (Some(&a), Some(&b)) => Ok(((a as usize) << 8) | b as usize),
        _ => Err("JPEG: the data ends inside a marker segment (truncated)".into()),
    }
}

/// Decodes `data`. `check_size(width, height)` is called once the frame
/// header is read, before anything is allocated for the pixels.
pub(super) fn decode(
    data: &[u8],
    check_size: &dyn Fn(u64, u64) -> Result<(), String>,
) -> Result<Decoded, String> {
    if !data.starts_with(&[0xFF, 0xD8]) {
        return Err("JPEG: no start-of-image marker".into());
    }
    let mut pos = 2;
    let mut qt: [Option<[u16; 64]>; 4] = [None; 4];
    let mut dc: [Option<Huffman>; 4] = [None, None, None, None];
    let mut ac: [Option<Huffman>; 4] = [None, None, None, None];
    let mut restart_interval = 0usize;
    let mut frame: Option<Frame> = None;
    let mut jfif = false;
    let mut adobe_transform: Option<u8> = None;
    loop {
        // find the next marker, skipping fill bytes (and, as libjpeg does,
        // stray bytes after a scan)
        while pos < data.len() && data[pos] != 0xFF {
            pos += 1;
        }
        while pos + 1 < data.len() && data[pos + 1] == 0xFF {
            pos += 1;
        }
        if pos + 1 >= data.len() {
            break; // end of data without EOI
        }
        let marker = data[pos + 1];
        pos += 2;
        match marker {
            0x00 | 0x01 | 0xD0..=0xD8 => continue,
            0xD9 => break,
            _ => {}
        }
        let len = be16(data, pos)?;
        if len < 2 || pos + len > data.len() {
            return Err(format!(
                "JPEG: marker 0x{marker:02X} segment of {len} bytes runs past the data (truncated)"
            ));
        }
        let seg = &data[pos + 2..pos + len];
        let seg_start = pos;
        pos += len;
        match marker {
            0xC0 | 0xC1 => {
                if frame.is_some() {
                    return Err("JPEG: more than one frame header".into());
                }
                frame = Some(read_frame(seg, check_size)?);
                if let Some(f) = &frame {
                    if f.comps.len() != 1 && f.comps.len() != 3 {
                        return Ok(Decoded::Unsupported); // a component count other than 1 or 3
                    }
                    if f.comps
                        .iter()
                        .any(|c| f.hmax % c.h != 0 || f.vmax % c.v != 0)
                    {
                        return Ok(Decoded::Unsupported); // fractional chroma sampling
                    }
                }
                if let Some(f) = &mut frame {
                    for c in &mut f.comps {
                        c.plane = vec![0u8; c.bw * 8 * c.bh * 8];
                    }
                }
            }
            0xC2 => return Ok(Decoded::Unsupported), // progressive coding
            0xC3 | 0xC5..=0xC7 | 0xCB | 0xCD..=0xCF => {
                return Ok(Decoded::Unsupported); // lossless or hierarchical coding
            }
            0xC9 | 0xCA => return Ok(Decoded::Unsupported), // arithmetic coding
            0xC4 => read_huffman(seg, &mut dc, &mut ac)?,
            0xDB => read_quant(seg, &mut qt)?,
            0xDD => {
                restart_interval = be16(seg, 0)?;
            }
            0xE0 if seg.starts_with(b"JFIF\0") => jfif = true,
            0xEE if seg.starts_with(b"Adobe") && seg.len() >= 12 => {
                adobe_transform = Some(seg[11]);
            }
            0xDA => {
                let f = frame
                    .as_mut()
                    .ok_or("JPEG: a scan before the frame header")?;
                pos = read_scan(
                    f,
                    seg,
                    data,
                    seg_start + len,
                    &qt,
                    &dc,
                    &ac,
                    restart_interval,
                )?;
            }
            _ => {} // APPn, COM and others: skipped
        }
    }
    let f = frame.ok_or("JPEG: no frame header (truncated?)")?;
    if let Some(c) = f.comps.iter().find(|c| !c.scanned) {
        return Err(format!(
            "JPEG: component {} has no scan data (truncated?)",
            c.id
        ));
    }
    let rgb_input = f.comps.len() == 3
        && if jfif {
            false
        } else if let Some(t) = adobe_transform {
            t == 0
        } else {
            f.comps[0].id == b'R' && f.comps[1].id == b'G' && f.comps[2].id == b'B'
        };
    let (w, h) = (f.width, f.height);
    let full: Vec<Vec<u8>> = f.comps.iter().map(|c| upsample(&f, c)).collect();
    let mut out = Vec::with_capacity(w * h * 3);
    match full.as_slice() {
        [y] => out.extend(y.iter().flat_map(|&v| [v, v, v])),
        [a, b, c] if rgb_input => {
            for i in 0..w * h {
                out.extend_from_slice(&[a[i], b[i], c[i]]);
            }
        }
        [y, cb, cr] => {
            for i in 0..w * h {
                out.extend_from_slice(&ycc_to_rgb(y[i], cb[i], cr[i]));
            }
        }
        _ => return Ok(Decoded::Unsupported), // a component count other than 1 or 3
    }
    Ok(Decoded::Rgb(h, w, out))
}

fn read_frame(
    seg: &[u8],
    check_size: &dyn Fn(u64, u64) -> Result<(), String>,
) -> Result<Frame, String> {
    let precision = *seg.first().ok_or("JPEG: empty frame header")?;
    let height = be16(seg, 1)?;
    let width = be16(seg, 3)?;
    let n = *seg.get(5).ok_or("JPEG: short frame header")? as usize;
    if precision != 8 {
        return Err(format!("JPEG: {precision}-bit samples are not supported"));
    }
    if height == 0 {
        return Err("JPEG: the frame declares height 0 (DNL marker not supported)".into());
    }
    check_size(width as u64, height as u64)?;
    if n == 0 || seg.len() < 6 + 3 * n {
        return Err(format!(
            "JPEG: frame header of {} bytes for {n} components",
            seg.len()
        ));
    }
    let mut comps = Vec::with_capacity(n);
    for i in 0..n {
        let c = &seg[6 + 3 * i..9 + 3 * i];
        let (h, v) = ((c[1] >> 4) as usize, (c[1] & 15) as usize);
        if !(1..=4).contains(&h) || !(1..=4).contains(&v) || c[2] > 3 {
            return Err(format!(
                "JPEG: component {} has sampling {h}x{v} or quantisation table {} out of range",
                c[0], c[2]
            ));
        }
        if comps.iter().any(|o: &Component| o.id == c[0]) {
            return Err(format!("JPEG: component id {} appears twice", c[0]));
        }
        comps.push(Component {
            id: c[0],
            h,
            v,
            tq: c[2] as usize,
            bw: 0,
            bh: 0,
            plane: Vec::new(),
            scanned: false,
        });
    }
    let hmax = comps.iter().map(|c| c.h).max().unwrap_or(1);
    let vmax = comps.iter().map(|c| c.v).max().unwrap_or(1);
    let mcus_x = width.div_ceil(8 * hmax);
    let mcus_y = height.div_ceil(8 * vmax);
    for c in &mut comps {
        c.bw = mcus_x * c.h;
        c.bh = mcus_y * c.v;
    }
    Ok(Frame {
        width,
        height,
        hmax,
        vmax,
        mcus_x,
        mcus_y,
        comps,
    })
}

fn read_quant(seg: &[u8], qt: &mut [Option<[u16; 64]>; 4]) -> Result<(), String> {
    let mut p = 0;
    while p < seg.len() {
        let pq = seg[p] >> 4;
        let tq = (seg[p] & 15) as usize;
        if tq > 3 || pq > 1 {
            return Err(format!(
                "JPEG: bad quantisation table header 0x{:02X}",
                seg[p]
            ));
        }
        p += 1;
        let size = if pq == 0 { 64 } else { 128 };
        let body = seg
            .get(p..p + size)
            .ok_or("JPEG: quantisation table runs past its segment")?;
        let mut t = [0u16; 64];
        for (k, &z) in ZIGZAG.iter().enumerate() {
            t[z] = if pq == 0 {
                body[k] as u16
            } else {
                ((body[2 * k] as u16) << 8) | body[2 * k + 1] as u16
            };
        }
        qt[tq] = Some(t);
        p += size;
    }
    Ok(())
}

fn read_huffman(
    seg: &[u8],
    dc: &mut [Option<Huffman>; 4],
    ac: &mut [Option<Huffman>; 4],
) -> Result<(), String> {
    let mut p = 0;
    while p < seg.len() {
        let class = seg[p] >> 4;
        let id = (seg[p] & 15) as usize;
        if class > 1 || id > 3 {
            return Err(format!("JPEG: bad Huffman table header 0x{:02X}", seg[p]));
        }
        let lens = seg
            .get(p + 1..p + 17)
            .ok_or("JPEG: Huffman table runs past its segment")?;
        let mut counts = [0u16; 17];
        for (i, &l) in lens.iter().enumerate() {
            counts[i + 1] = l as u16;
        }
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        if total > 256 {
            return Err(format!("JPEG: Huffman table with {total} symbols"));
        }
        let symbols = seg
            .get(p + 17..p + 17 + total)
            .ok_or("JPEG: Huffman table runs past its segment")?
            .to_vec();
        let t = Huffman::new(counts, symbols)?;
        if class == 0 {
            dc[id] = Some(t);
        } else {
            ac[id] = Some(t);
        }
        p += 17 + total;
    }
    Ok(())
}

/// Decodes one scan whose header is `seg` and whose data starts at
/// `start`; returns the position after the data.
#[allow(clippy::too_many_arguments)]
fn read_scan(
    f: &mut Frame,
    seg: &[u8],
    data: &[u8],
    start: usize,
    qt: &[Option<[u16; 64]>; 4],
    dc: &[Option<Huffman>; 4],
    ac: &[Option<Huffman>; 4],
    restart_interval: usize,
) -> Result<usize, String> {
    let n = *seg.first().ok_or("JPEG: empty scan header")? as usize;
    if n == 0 || n > 4 || seg.len() < 1 + 2 * n + 3 {
        return Err(format!(
            "JPEG: scan header of {} bytes for {n} components",
            seg.len()
        ));
    }
    let (ss, se, a) = (seg[1 + 2 * n], seg[2 + 2 * n], seg[3 + 2 * n]);
    if ss != 0 || se != 63 || a != 0 {
        return Err(format!(
            "JPEG: sequential scan with spectral selection {ss}..{se} and approximation {a}"
        ));
    }
    // per scan component: index into f.comps, quant table, DC and AC tables
    let mut sc: Vec<(usize, [u16; 64], &Huffman, &Huffman)> = Vec::with_capacity(n);
    for i in 0..n {
        let (id, tables) = (seg[1 + 2 * i], seg[2 + 2 * i]);
        let ci = f
            .comps
            .iter()
            .position(|c| c.id == id)
            .ok_or_else(|| format!("JPEG: scan names unknown component {id}"))?;
        if sc.iter().any(|s| s.0 == ci) {
            return Err(format!("JPEG: scan names component {id} twice"));
        }
        let c = &f.comps[ci];
        let q = qt[c.tq].ok_or_else(|| format!("JPEG: quantisation table {} not defined", c.tq))?;
        let (td, ta) = ((tables >> 4) as usize, (tables & 15) as usize);
        let d = dc
            .get(td)
            .and_then(|t| t.as_ref())
            .ok_or_else(|| format!("JPEG: DC Huffman table {td} not defined"))?;
        let t = ac
            .get(ta)
            .and_then(|t| t.as_ref())
            .ok_or_else(|| format!("JPEG: AC Huffman table {ta} not defined"))?;
        sc.push((ci, q, d, t));
    }
    if n > 1
        && sc
            .iter()
            .map(|s| f.comps[s.0].h * f.comps[s.0].v)
            .sum::<usize>()
            > 10
    {
        return Err("JPEG: more than 10 blocks in an MCU".into());
    }
    // a single-component scan codes the component's own blocks one by one;
    // an interleaved scan codes whole MCUs
    let (units_x, units_y) = if n == 1 {
        let c = &f.comps[sc[0].0];
        (
            (f.width * c.h).div_ceil(f.hmax).div_ceil(8),
            (f.height * c.v).div_ceil(f.vmax).div_ceil(8),
        )
    } else {
        (f.mcus_x, f.mcus_y)
    };
    let mut bits = Bits::new(data, start);
    let mut pred = [0i32; 4];
    let mut coef = [0i16; 64];
    let total = units_x * units_y;
    let mut next_rst = 0u8;
    for unit in 0..total {
        if restart_interval > 0 && unit > 0 && unit % restart_interval == 0 {
            bits.restart(next_rst)?;
            next_rst = (next_rst + 1) & 7;
            pred = [0; 4];
        }
        let (ux, uy) = (unit % units_x, unit / units_x);
        for (k, (ci, q, d, t)) in sc.iter().enumerate() {
            let c = &mut f.comps[*ci];
            let (bh_, bv_) = if n == 1 { (1, 1) } else { (c.h, c.v) };
            for by in 0..bv_ {
                for bx in 0..bh_ {
                    decode_block(&mut bits, d, t, &mut pred[k], &mut coef)?;
                    let (x, y) = (ux * bh_ + bx, uy * bv_ + by);
                    let stride = c.bw * 8;
                    let at = y * 8 * stride + x * 8;
                    idct_islow(&coef, q, &mut c.plane[at..], stride);
                }
            }
        }
    }
    for (ci, ..) in &sc {
        f.comps[*ci].scanned = true;
    }
    Ok(bits.pos)
}

fn decode_block(
    bits: &mut Bits,
    dc: &Huffman,
    ac: &Huffman,
    pred: &mut i32,
    coef: &mut [i16; 64],
) -> Result<(), String> {
    *coef = [0; 64];
    let t = bits.decode(dc)? as u32;
    if t > 16 {
        return Err(format!("JPEG: DC difference category {t}"));
    }
    *pred = pred.wrapping_add(bits.extend(t)?);
    coef[0] = *pred as i16;
    let mut k = 1usize;
    while k < 64 {
        let rs = bits.decode(ac)?;
        let (r, s) = ((rs >> 4) as usize, (rs & 15) as u32);
        if s != 0 {
            k += r;
            // a run past the end lands on the last coefficient, as libjpeg
            coef[ZIGZAG[k.min(63)]] = bits.extend(s)? as i16;
        } else if r != 15 {
            break;
        } else {
            k += 15;
        }
        k += 1;
    }
    Ok(())
}

// 13-bit fixed-point constants of the islow inverse DCT: round(x * 8192)
const C_0_298631336: i64 = 2446;
const C_0_390180644: i64 = 3196;
const C_0_541196100: i64 = 4433;
const C_0_765366865: i64 = 6270;
const C_0_899976223: i64 = 7373;
const C_1_175875602: i64 = 9633;
const C_1_501321110: i64 = 12299;
const C_1_847759065: i64 = 15137;
const C_1_961570560: i64 = 16069;
const C_2_053119869: i64 = 16819;
const C_2_562915447: i64 = 20995;
const C_3_072711026: i64 = 25172;

/// One 1-D pass of the islow inverse DCT on `x[0..8]` (already scaled);
/// returns the eight outputs before descaling, in units of 2^13.
fn idct_1d(x: [i64; 8]) -> [i64; 8] {
    // even part
    let z1 = (x[2] + x[6]) * C_0_541196100;
    let t2 = z1 - x[6] * C_1_847759065;
    let t3 = z1 + x[2] * C_0_765366865;
    let t0 = (x[0] + x[4]) << 13;
    let t1 = (x[0] - x[4]) << 13;
    let (e0, e3, e1, e2) = (t0 + t3, t0 - t3, t1 + t2, t1 - t2);
    // odd part
    let (o0, o1, o2, o3) = (x[7], x[5], x[3], x[1]);
    let z1 = -(o0 + o3) * C_0_899976223;
    let z2 = -(o1 + o2) * C_2_562915447;
    let z5 = (o0 + o2 + o1 + o3) * C_1_175875602;
    let z3 = -(o0 + o2) * C_1_961570560 + z5;
    let z4 = -(o1 + o3) * C_0_390180644 + z5;
    let p0 = o0 * C_0_298631336 + z1 + z3;
    let p1 = o1 * C_2_053119869 + z2 + z4;
    let p2 = o2 * C_3_072711026 + z2 + z3;
    let p3 = o3 * C_1_501321110 + z1 + z4;
    [
        e0 + p3,
        e1 + p2,
        e2 + p1,
        e3 + p0,
        e3 - p0,
        e2 - p1,
        e1 - p2,
        e0 - p3,
    ]
}

/// Dequantises `coef` with `q` and writes the 8x8 samples at `out` (row
/// stride `stride`).
fn idct_islow(coef: &[i16; 64], q: &[u16; 64], out: &mut [u8], stride: usize) {
    let mut ws = [0i64; 64];
    // columns: keep 2 extra bits
    for col in 0..8 {
        let mut x = [0i64; 8];
        for (row, v) in x.iter_mut().enumerate() {
            // libjpeg-turbo holds quantisation values as 16-bit signed
            *v = coef[row * 8 + col] as i64 * (q[row * 8 + col] as i16 as i64);
        }
        let y = idct_1d(x);
        for (row, v) in y.iter().enumerate() {
            ws[row * 8 + col] = (v + (1 << 10)) >> 11;
        }
    }
    // rows: remove the 2 extra bits, the 13 constant bits and the 8 of the
    // 2-D transform's scale, then level-shift and range-limit
    for row in 0..8 {
        let mut x = [0i64; 8];
        x.copy_from_slice(&ws[row * 8..row * 8 + 8]);
        let y = idct_1d(x);
        if let Some(dst) = out.get_mut(row * stride..row * stride + 8) {
            for (d, v) in dst.iter_mut().zip(y) {
                let s = (v + (1 << 17)) >> 18;
                // libjpeg's range limit: wrap to 10 bits, then clamp
                let w = ((s + 512) & 1023) - 512;
                *d = (w + 128).clamp(0, 255) as u8;
            }
        }
    }
}

/// The component's samples brought to the full image size.
fn upsample(f: &Frame, c: &Component) -> Vec<u8> {
    let (w, h) = (f.width, f.height);
    let stride = c.bw * 8;
    // the component's own size; samples past it are padding
    let cw = (w * c.h).div_ceil(f.hmax);
    let chh = (h * c.v).div_ceil(f.vmax);
    let (fx, fy) = (f.hmax / c.h, f.vmax / c.v);
    let at =
        |x: usize, y: usize| -> i32 { c.plane[y.min(chh - 1) * stride + x.min(cw - 1)] as i32 };
    let mut out = vec![0u8; w * h];
    match (fx, fy) {
        (1, 1) => {
            for y in 0..h {
                for x in 0..w {
                    out[y * w + x] = at(x, y) as u8;
                }
            }
        }
        (2, 1) if cw > 2 => {
            for y in 0..h {
                for x in 0..w {
                    let i = x / 2;
                    let near = at(i, y) * 3;
                    out[y * w + x] = if x % 2 == 0 {
                        if i == 0 {
                            at(0, y) as u8
                        } else {
                            ((near + at(i - 1, y) + 1) >> 2) as u8
                        }
                    } else if i == cw - 1 {
                        at(i, y) as u8
                    } else {
                        ((near + at(i + 1, y) + 2) >> 2) as u8
                    };
                }
            }
        }
        (1, 2) => {
            for y in 0..h {
                let j = y / 2;
                // the nearer input row counts three times, the other once
                let (other, bias) = if y % 2 == 0 {
                    (j.saturating_sub(1), 1)
                } else {
                    (j + 1, 2)
                };
                for x in 0..w {
                    out[y * w + x] = ((at(x, j) * 3 + at(x, other) + bias) >> 2) as u8;
                }
            }
        }
        (2, 2) if cw > 2 => {
            for y in 0..h {
                let j = y / 2;
                let other = if y % 2 == 0 {
                    j.saturating_sub(1)
                } else {
                    j + 1
                };
                let col = |i: usize| at(i, j) * 3 + at(i, other);
                for x in 0..w {
                    let i = x / 2;
                    let this = col(i);
                    out[y * w + x] = if x % 2 == 0 {
                        if i == 0 {
                            ((this * 4 + 8) >> 4) as u8
                        } else {
                            ((this * 3 + col(i - 1) + 8) >> 4) as u8
                        }
                    } else if i == cw - 1 {
                        ((this * 4 + 7) >> 4) as u8
                    } else {
                        ((this * 3 + col(i + 1) + 7) >> 4) as u8
                    };
                }
            }
        }
        _ => {
            for y in 0..h {
                for x in 0..w {
                    out[y * w + x] = at(x / fx, y / fy) as u8;
                }
            }
        }
    }
    out
}

/// libjpeg's YCbCr to RGB conversion, 16-bit fixed point.
fn ycc_to_rgb(y: u8, cb: u8, cr: u8) -> [u8; 3] {
    const HALF: i32 = 1 << 15;
    let (y, cb, cr) = (y as i32, cb as i32 - 128, cr as i32 - 128);
    // round(x * 65536) of 1.402, 1.772, 0.71414, 0.34414
    let r = y + ((91881 * cr + HALF) >> 16);
    let b = y + ((116130 * cb + HALF) >> 16);
    let g = y + ((-22554 * cb + HALF - 46802 * cr) >> 16);
    [
        r.clamp(0, 255) as u8,
        g.clamp(0, 255) as u8,
        b.clamp(0, 255) as u8,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_limit(_: u64, _: u64) -> Result<(), String> {
        Ok(())
    }

    /// A smooth test picture with some edges, encoded by the `image` crate
    /// (baseline, 4:2:2 chroma for colour, one component for gray).
    fn encoded(gray: bool) -> (Vec<u8>, u32, u32) {
        let (w, h) = (37u32, 29u32);
        let mut px = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let e = if (x / 9 + y / 7) % 2 == 0 { 60 } else { 0 };
                px.extend_from_slice(&[
                    (x * 6 + e) as u8,
                    (y * 8) as u8,
                    (200 - x * 3 - y * 2) as u8,
                ]);
            }
        }
        let mut out = Vec::new();
        let mut enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
        if gray {
            let g: Vec<u8> = px.chunks_exact(3).map(|p| p[1]).collect();
            enc.encode(&g, w, h, image::ExtendedColorType::L8).unwrap();
        } else {
            enc.encode(&px, w, h, image::ExtendedColorType::Rgb8)
                .unwrap();
        }
        (out, w, h)
    }

    #[test]
    fn agrees_with_another_decoder_to_within_rounding() {
        for gray in [false, true] {
            let (b, w, h) = encoded(gray);
            let Decoded::Rgb(hh, ww, ours) = decode(&b, &no_limit).unwrap() else {
                panic!("baseline JPEG reported unsupported");
            };
            assert_eq!((hh, ww), (h as usize, w as usize));
            let theirs = image::load_from_memory(&b).unwrap().into_rgb8().into_raw();
            assert_eq!(ours.len(), theirs.len());
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(a, b)| (*a as i32 - *b as i32).abs())
                .max()
                .unwrap();
            assert!(worst <= 3, "gray={gray}: differs by up to {worst}");
        }
    }

    #[test]
    fn truncated_and_corrupt_streams_are_errors_not_panics() {
        let (b, ..) = encoded(false);
        // every cut inside the header or the scan data is an error; only the
        // trailing EOI marker may be missing
        for n in 0..b.len() - 2 {
            assert!(
                decode(&b[..n], &no_limit).is_err(),
                "cut at {n} of {}",
                b.len()
            );
        }
        // flipped bytes: an image or an error, never a panic
        let mut state = 12345u32;
        for _ in 0..3000 {
            let mut c = b.clone();
            for _ in 0..3 {
                state = state.wrapping_mul(1103515245).wrapping_add(12345);
                let i = (state >> 8) as usize % c.len();
                c[i] ^= (state >> 24) as u8 | 1;
            }
            let _ = decode(&c, &no_limit);
        }
    }

    #[test]
    fn size_check_runs_before_decoding() {
        let (b, ..) = encoded(true);
        let refuse = |w: u64, h: u64| Err(format!("{w} x {h} refused"));
        assert_eq!(
            decode(&b, &refuse).err().as_deref(),
            Some("37 x 29 refused")
        );
    }

    #[test]
    fn progressive_is_left_to_another_decoder() {
        let b = [
            0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x0B, 8, 0, 1, 0, 1, 1, 1, 0x11, 0,
        ];
        assert!(matches!(decode(&b, &no_limit), Ok(Decoded::Unsupported)));
    }

    #[test]
    fn idct_of_a_dc_only_block_is_flat() {
        let mut coef = [0i16; 64];
        let q = [1u16; 64];
        let mut out = [0u8; 64];
        // (dc / 8) rounded half up, plus 128, clamped
        for (dc, want) in [(80, 138), (-84, 118), (2000, 255), (-2000, 0)] {
            coef[0] = dc;
            idct_islow(&coef, &q, &mut out, 8);
            assert!(out.iter().all(|&v| v == want), "dc {dc}: {out:?}");
        }
    }

    #[test]
    fn ycc_conversion_uses_libjpeg_fixed_point() {
        assert_eq!(ycc_to_rgb(128, 128, 128), [128, 128, 128]);
        // R = 0 + round(1.402 * 127), G = round(-0.71414 * 127), clamped
        assert_eq!(ycc_to_rgb(0, 128, 255), [178, 0, 0]);
        assert_eq!(ycc_to_rgb(100, 0, 128), [100, 144, 0]);
    }
}
