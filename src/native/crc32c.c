// CRC32C (Castagnoli) of a byte range of a Buffer, with the SSE4.2 crc32 instruction run on three streams at once.
//
// Why native: every batch a producer sends is checked by its CRC32C before it is appended (as Kafka's
// UnifiedLog.analyzeAndValidateRecords checks it), and the check was the largest share of the broker's own CPU on
// the produce path. The crc32 instruction takes three cycles to give its result but can start one every cycle, so a
// single dependent chain runs at a third of what the core can do; three chains over three blocks, joined by
// shifting the first two results over the bytes that follow them (a table lookup, CRC being linear), use it fully.
//
// Exports `crc32cRange(buffer, start, end)` -> uint32 (the standard CRC32C: initial and final inversion) and
// `supported` (whether this CPU has SSE4.2; when false, callers use the portable library). Built by
// tools/build-native.mjs with the system's C compiler and Node's own headers; nothing else to install. Pure: no
// state after the tables, which are filled once per process (pthread_once), so it is safe on any thread.

#include <node_api.h>
#include <nmmintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

// The two block sizes of the three-stream loops: long blocks for the bulk of a batch, short blocks for its tail.
#define LONG_BLOCK_BYTES 8192
#define SHORT_BLOCK_BYTES 256

// shiftLong[k][v]: the CRC register value v << 8k advanced over LONG_BLOCK_BYTES zero bytes (likewise short).
static uint32_t shiftLong[4][256];
static uint32_t shiftShort[4][256];
static int sse42 = 0;

__attribute__((target("sse4.2"))) static uint32_t advanceOverZeros(uint32_t value, size_t bytes) {
  uint64_t c = value;
  for (size_t i = 0; i < bytes; i += 8) c = _mm_crc32_u64(c, 0);
  return (uint32_t)c;
}

// Advancing over zeros is linear in the register, so each table entry is the XOR of its bits' advanced values.
static void fillShiftTable(uint32_t table[4][256], size_t bytes) {
  for (int k = 0; k < 4; k++) {
    uint32_t bitValues[8];
    for (int bit = 0; bit < 8; bit++) bitValues[bit] = advanceOverZeros((uint32_t)1 << (8 * k + bit), bytes);
    for (int v = 0; v < 256; v++) {
      uint32_t sum = 0;
      for (int bit = 0; bit < 8; bit++)
        if (v & (1 << bit)) sum ^= bitValues[bit];
      table[k][v] = sum;
    }
  }
}

static inline uint32_t shiftBy(uint32_t table[4][256], uint32_t c) {
  return table[0][c & 0xff] ^ table[1][(c >> 8) & 0xff] ^ table[2][(c >> 16) & 0xff] ^ table[3][c >> 24];
}

static inline uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

__attribute__((target("sse4.2"))) static uint64_t threeStreams(
  uint64_t c0, const uint8_t **at, size_t *left, size_t blockBytes, uint32_t table[4][256]) {
  const uint8_t *p = *at;
  size_t n = *left;
  while (n >= 3 * blockBytes) {
    uint64_t c1 = 0, c2 = 0;
    const uint8_t *p1 = p + blockBytes, *p2 = p + 2 * blockBytes;
    for (size_t i = 0; i < blockBytes; i += 8) {
      c0 = _mm_crc32_u64(c0, load64(p + i));
      c1 = _mm_crc32_u64(c1, load64(p1 + i));
      c2 = _mm_crc32_u64(c2, load64(p2 + i));
    }
    // CRC(A B C) = shift(shift(crcA) ^ crcB) ^ crcC, where crcB and crcC started from zero.
    c0 = shiftBy(table, (uint32_t)c0) ^ c1;
    c0 = shiftBy(table, (uint32_t)c0) ^ c2;
    p += 3 * blockBytes;
    n -= 3 * blockBytes;
  }
  *at = p;
  *left = n;
  return c0;
}

__attribute__((target("sse4.2"))) static uint32_t crc32cHardware(const uint8_t *p, size_t n) {
  uint64_t c = 0xffffffffu;
  c = threeStreams(c, &p, &n, LONG_BLOCK_BYTES, shiftLong);
  c = threeStreams(c, &p, &n, SHORT_BLOCK_BYTES, shiftShort);
  for (; n >= 8; p += 8, n -= 8) c = _mm_crc32_u64(c, load64(p));
  for (; n > 0; p++, n--) c = _mm_crc32_u8((uint32_t)c, *p);
  return ~(uint32_t)c;
}

#define CHECK(call)                                                                                                  \
  if ((call) != napi_ok) {                                                                                           \
    napi_throw_error(env, NULL, "crc32c: " #call " failed");                                                        \
    return NULL;                                                                                                     \
  }

static napi_value crc32cRange(napi_env env, napi_callback_info info) {
  if (!sse42) {
    napi_throw_error(env, NULL, "crc32cRange: this CPU has no SSE4.2 (check `supported` first)");
    return NULL;
  }
  size_t argc = 3;
  napi_value argv[3];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool isView = false;
  if (argc == 3) CHECK(napi_is_typedarray(env, argv[0], &isView));
  if (!isView) {
    napi_throw_type_error(env, NULL, "crc32cRange(buffer, start, end) takes a Buffer and two offsets");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length;
  void *data;
  CHECK(napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL));
  double start, end;
  CHECK(napi_get_value_double(env, argv[1], &start));
  CHECK(napi_get_value_double(env, argv[2], &end));
  // A range outside the buffer is a caller's bug: refuse it rather than read memory that is not the buffer's.
  if (type != napi_uint8_array || !(start >= 0 && start <= end && end <= (double)length) ||
      start != (double)(size_t)start || end != (double)(size_t)end) {
    napi_throw_range_error(env, NULL, "crc32cRange: the range must lie within a Uint8Array");
    return NULL;
  }
  uint32_t crc = crc32cHardware((const uint8_t *)data + (size_t)start, (size_t)(end - start));
  napi_value result;
  CHECK(napi_create_uint32(env, crc, &result));
  return result;
}

// Worker threads load the module again; the tables are filled once, so no thread reads one while another writes it.
static pthread_once_t tablesOnce = PTHREAD_ONCE_INIT;

static void fillTables(void) {
  __builtin_cpu_init();
  sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) {
    fillShiftTable(shiftLong, LONG_BLOCK_BYTES);
    fillShiftTable(shiftShort, SHORT_BLOCK_BYTES);
  }
}

static napi_value init(napi_env env, napi_value exports) {
  pthread_once(&tablesOnce, fillTables);
  napi_value fn, supported;
  CHECK(napi_create_function(env, "crc32cRange", NAPI_AUTO_LENGTH, crc32cRange, NULL, &fn));
  CHECK(napi_set_named_property(env, exports, "crc32cRange", fn));
  CHECK(napi_get_boolean(env, sse42 != 0, &supported));
  CHECK(napi_set_named_property(env, exports, "supported", supported));
  return exports;
}

NAPI_MODULE(crc32c, init)
