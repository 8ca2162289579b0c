//! Functions compiled for the widest vector unit this CPU has.
//!
//! The f32 kernels are plain Rust loops the compiler vectorises; built for
//! baseline x86-64 they get 4-lane SSE2. A function declared with
//! [`widest_fn!`] is compiled three times, as written, with AVX2 and FMA
//! enabled, and with AVX-512F as well, and runs the widest the CPU has, so
//! its loops use 16 or 8 lanes. The body is inlined into each variant (a
//! closure handed to a `#[target_feature]` function is not reliably
//! inlined, and called out of line it keeps the baseline's 4 lanes). The sums are the same in every
//! variant (Rust does not contract `a * b + c` into a fused multiply-add),
//! so results do not depend on the CPU.

/// `widest_fn! { fn name(arg: Type, ...) -> Ret { body } }`: `name` with
/// its body compiled for AVX-512F, or AVX2 + FMA, when the CPU has them.
macro_rules! widest_fn {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)? $body:block) => {
        $(#[$m])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn plain($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2($($arg: $ty),*) $(-> $ret)? {
                plain($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn avx512($($arg: $ty),*) $(-> $ret)? {
                plain($($arg),*)
            }
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F (and so AVX2 and FMA)
                    return unsafe { avx512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has AVX2 and FMA
                    return unsafe { avx2($($arg),*) };
                }
            }
            plain($($arg),*)
        }
    };
}
pub(crate) use widest_fn;

#[cfg(test)]
mod tests {
    widest_fn! {
        /// Twice the sum of a slice.
        fn doubled_sum(x: &[f32]) -> f32 {
            x.iter().map(|v| v * 2.0).sum()
        }
    }

    #[test]
    fn a_widest_fn_computes_what_its_body_says() {
        let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5).collect();
        let plain: f32 = x.iter().map(|v| v * 2.0).sum();
        assert_eq!(doubled_sum(&x), plain);
    }
}
