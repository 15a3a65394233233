/* kernel/half.h — IEEE binary16 (the float16 dtype) in software: a double
 * rounded to the nearest binary16 (ties to even, subnormals, overflow to
 * inf, NaN kept) and a binary16 widened to double, exactly. Static inline
 * and free of libm and _Float16 so that the interpreter, the program
 * marshalling and the stand-alone runtime (libvsched_rt.a) share it.
 *
 * Why computing a float16 operation in double (or float) and rounding the
 * result once is exactly IEEE half arithmetic: for + - * / and sqrt of
 * p-bit operands, rounding first to q >= 2p + 2 bits and then to p bits
 * equals rounding once to p bits (Figueroa, "When is double rounding
 * innocuous?", 1995). Here p = 11, and float (q = 24) and double (q = 53)
 * both qualify, also in the subnormal range of half (float and double
 * have finer quanta there). Other roundings (libm calls, fma) are not
 * IEEE half operations: vsched defines them as "the float32 function,
 * then rounded to half", in the interpreter and compiled code alike. */
#ifndef VS_KERNEL_HALF_H
#define VS_KERNEL_HALF_H

#include <stdint.h>
#include <string.h>

#define VS_F16_MAX 65504.0 /* largest finite binary16 */

/* The binary16 bits nearest to x (round to nearest, ties to even). */
static inline uint16_t vs_f16_from_double(double x)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
	int exp = (int)((b >> 52) & 0x7ff);
	uint64_t man = b & ((UINT64_C(1) << 52) - 1);
	if (exp == 0x7ff) /* inf, or NaN made quiet with the top payload bits */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 42) : 0));
	if (exp == 0) /* zero or a double subnormal, far below 2^-25 */
		return sign;
	int e = exp - 1023;
	if (e > 15) /* >= 2^16 > 65520: rounds to inf */
		return (uint16_t)(sign | 0x7c00);
	uint64_t sig = man | (UINT64_C(1) << 52); /* x = sig * 2^(e - 52) */
	int q = e >= -14 ? e - 10 : -24; /* exponent of the half quantum at x */
	int shift = 52 + q - e;          /* >= 42 */
	if (shift > 63) /* x < 2^-35, far below half the least subnormal */
		return sign;
	uint64_t m = sig >> shift; /* x = (m + rest) * 2^q */
	uint64_t rest = sig & ((UINT64_C(1) << shift) - 1);
	uint64_t tie = UINT64_C(1) << (shift - 1);
	if (rest > tie || (rest == tie && (m & 1)))
		m++;
	if (e < -14) /* subnormal; m == 2^10 is the least normal, same bits */
		return (uint16_t)(sign | m);
	/* m in [2^10, 2^11]: the implicit bit carries into the exponent, and
	 * 2^11 * 2^15 gives exponent 31 with fraction 0, i.e. inf */
	return (uint16_t)(sign | (((uint64_t)(e + 14) << 10) + m));
}

/* The value of the binary16 bits h, exactly. */
static inline double vs_f16_to_double(uint16_t h)
{
	uint64_t sign = (uint64_t)(h >> 15) << 63;
	int exp = (h >> 10) & 0x1f;
	uint64_t frac = h & 0x3ff;
	uint64_t b;
	if (exp == 0) { /* frac * 2^-24: exact in double */
		double v = (double)frac * 0x1p-24;
		memcpy(&b, &v, sizeof b);
		b |= sign;
	} else if (exp == 31) {
		b = sign | (UINT64_C(0x7ff) << 52) | (frac << 42) |
		    (frac ? UINT64_C(1) << 51 : 0);
	} else {
		b = sign | ((uint64_t)(exp - 15 + 1023) << 52) | (frac << 42);
	}
	double v;
	memcpy(&v, &b, sizeof v);
	return v;
}

/* x rounded to the nearest binary16 value, as a double. */
static inline double vs_f16_round(double x)
{
	return vs_f16_to_double(vs_f16_from_double(x));
}

#endif
