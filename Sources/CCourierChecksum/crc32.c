#include "CCourierChecksum.h"
#include <limits.h>
#include <zlib.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#include <smmintrin.h>
#include <wmmintrin.h>

// Folding constants for the bit-reflected polynomial 0xEDB88320 (x^n mod P for the fold distances, then the
// Barrett reduction's mu and P), from the paper's appendix as used by Chromium's crc32_simd.c.
static const uint64_t k1k2[2] __attribute__((aligned(16))) = {0x0154442bd4, 0x01c6e41596};
static const uint64_t k3k4[2] __attribute__((aligned(16))) = {0x01751997d0, 0x00ccaa009e};
static const uint64_t k5k0[2] __attribute__((aligned(16))) = {0x0163cd6124, 0x0000000000};
static const uint64_t poly[2] __attribute__((aligned(16))) = {0x01db710641, 0x01f7011641};

// The raw (pre- and post-inverted by the caller) CRC of `length` bytes; `length` >= 64 and a multiple of 16.
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32Folded(const uint8_t *buffer, size_t length, uint32_t crc) {
    __m128i x0, x1, x2, x3, x4, x5, x6, x7, x8, y5, y6, y7, y8;

    x1 = _mm_loadu_si128((const __m128i *)(buffer + 0x00));
    x2 = _mm_loadu_si128((const __m128i *)(buffer + 0x10));
    x3 = _mm_loadu_si128((const __m128i *)(buffer + 0x20));
    x4 = _mm_loadu_si128((const __m128i *)(buffer + 0x30));
    x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)crc));
    x0 = _mm_load_si128((const __m128i *)k1k2);
    buffer += 64;
    length -= 64;

    // Four 128-bit lanes folded 64 bytes at a time.
    while (length >= 64) {
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x6 = _mm_clmulepi64_si128(x2, x0, 0x00);
        x7 = _mm_clmulepi64_si128(x3, x0, 0x00);
        x8 = _mm_clmulepi64_si128(x4, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x2 = _mm_clmulepi64_si128(x2, x0, 0x11);
        x3 = _mm_clmulepi64_si128(x3, x0, 0x11);
        x4 = _mm_clmulepi64_si128(x4, x0, 0x11);
        y5 = _mm_loadu_si128((const __m128i *)(buffer + 0x00));
        y6 = _mm_loadu_si128((const __m128i *)(buffer + 0x10));
        y7 = _mm_loadu_si128((const __m128i *)(buffer + 0x20));
        y8 = _mm_loadu_si128((const __m128i *)(buffer + 0x30));
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x5), y5);
        x2 = _mm_xor_si128(_mm_xor_si128(x2, x6), y6);
        x3 = _mm_xor_si128(_mm_xor_si128(x3, x7), y7);
        x4 = _mm_xor_si128(_mm_xor_si128(x4, x8), y8);
        buffer += 64;
        length -= 64;
    }

    // The four lanes folded into one.
    x0 = _mm_load_si128((const __m128i *)k3k4);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
    x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
    x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);

    // Whatever 16-byte blocks are left, one at a time.
    while (length >= 16) {
        x2 = _mm_loadu_si128((const __m128i *)buffer);
        x5 = _mm_clmulepi64_si128(x1, x0, 0x00);
        x1 = _mm_clmulepi64_si128(x1, x0, 0x11);
        x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
        buffer += 16;
        length -= 16;
    }

    // 128 bits to 64.
    x2 = _mm_clmulepi64_si128(x1, x0, 0x10);
    x3 = _mm_setr_epi32(~0, 0, ~0, 0);
    x1 = _mm_srli_si128(x1, 8);
    x1 = _mm_xor_si128(x1, x2);
    x0 = _mm_loadl_epi64((const __m128i *)k5k0);
    x2 = _mm_srli_si128(x1, 4);
    x1 = _mm_and_si128(x1, x3);
    x1 = _mm_clmulepi64_si128(x1, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);

    // Barrett reduction to 32 bits.
    x0 = _mm_load_si128((const __m128i *)poly);
    x2 = _mm_and_si128(x1, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x10);
    x2 = _mm_and_si128(x2, x3);
    x2 = _mm_clmulepi64_si128(x2, x0, 0x00);
    x1 = _mm_xor_si128(x1, x2);
    return (uint32_t)_mm_extract_epi32(x1, 1);
}

int CCourierChecksum_crc32IsAccelerated(void) {
    return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
#else
int CCourierChecksum_crc32IsAccelerated(void) { return 0; }
#endif

uint32_t CCourierChecksum_crc32(uint32_t crc, const uint8_t *bytes, size_t length) {
    if (bytes == NULL) return crc;
#if defined(__x86_64__)
    if (length >= 64 && CCourierChecksum_crc32IsAccelerated()) {
        size_t folded = length & ~(size_t)15;
        crc = ~crc32Folded(bytes, folded, ~crc);
        bytes += folded;
        length -= folded;
    }
#endif
    // zlib takes a 32-bit length: larger inputs go in slices.
    while (length > 0) {
        uInt slice = length > UINT_MAX ? UINT_MAX : (uInt)length;
        crc = (uint32_t)crc32(crc, bytes, slice);
        bytes += slice;
        length -= slice;
    }
    return crc;
}
