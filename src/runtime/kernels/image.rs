//! Image kernels: Resize, Upsample.
