/*
** colvec_quant.h — vector quantizers (SQLite-free).
**
** A ColvecQuant is trained once per vector column of a segment from that
** segment's float32 vectors. It turns every vector into a fixed-size code,
** and turns a query into a ColvecQuantQuery that estimates the distance from
** the query to any code. HNSW search runs over these estimates; the caller
** then rescores an oversampled candidate pool with the exact float32 vectors.
**
** Types:
**   COLVEC_QUANT_NONE  no codes (0 bytes). The caller uses float32 kernels.
**   COLVEC_QUANT_INT8  per-dimension scalar quantization, 255 steps between
**                      that dimension's min and max in the training data.
**   COLVEC_QUANT_INT4  the same with 15 steps, two dimensions per byte.
**   COLVEC_QUANT_BIT   RaBitQ (Gao & Long, SIGMOD 2024): the vector minus a
**                      centroid, randomly rotated, one sign bit per rotated
**                      dimension, plus two float correction factors; the
**                      estimator of <o,q> is <o_bar,q>/<o_bar,o>, unbiased.
**
** Structure: a type is a ColvecQuantMethods (hooks for layout, setup,
** parameter checks, training, encoding, query preparation); its code
** kernel sets (ColvecQuantKernels) live with the other kernels of their
** instruction set, one file per set (colvec_quant_kernels.h).
** colvec_quant.c maps the stored type id to the methods and does the rest
** without looking at the type. Kernels are chosen once per quantizer from
** colvecOsCpuFeatures() under the ceiling of the distance kernel set in
** use (COLVEC_KERNELS).
** See "Adding a quantizer" below (private section) and
** doc/ARCHITECTURE.md.
**
** Design choices:
**   - Per-dimension min/scale (not one global range): dimensions of real
**     embeddings have different spreads, and a global range wastes steps on
**     the narrow ones. Training takes min and max over all vectors but the
**     outliers (NaN and infinities are ignored).
**   - Outliers: a few rows far from the others would stretch the ranges
**     (and move the centroid) until every other row got the same code.
**     Training first finds them (colvec_quant.c:quantFindOutliers): over a
**     deterministic sample, each dimension's median and each row's
**     deviation (largest |x[d] - median[d]|); a row deviating more than 8
**     times the sample's 90th percentile is an outlier. The types train
**     without them (their codes are clipped, or far off), and the caller
**     gets their list (colvecQuantOutliers) to score them exactly. Data
**     without such rows keeps none out, and codes identical to before.
**   - Int codes are estimated asymmetrically: the query stays float. The
**     kernel is one multiply-add per dimension, sum w[d]*code[d], with
**     w[d] = (q[d]-min[d])*scale[d] prepared per query; each code carries
**     |decoded - min|^2 as a float, so l2 needs no second pass.
**   - The rotation is a randomised Hadamard transform: three rounds of
**     random sign flips followed by a fast Walsh-Hadamard transform on the
**     dimension padded to a power of two nPad >= 64. It is orthogonal, costs
**     3*nPad*log2(nPad) additions and is rebuilt from a 64-bit seed (stored in
**     the serialized form) by a splitmix64 generator: no D x D matrix. All
**     nPad rotated coordinates are coded (784-d -> 1024 bits).
**   - The bit estimator quantizes the rotated query to 4 bits per dimension
**     (deterministic rounding) and stores it as 4 bit planes, so that
**     <bits, query> = sum_j 2^j popcount(bits & plane_j): integer work only.
**     An AVX2 kernel (vpshufb popcount), an AVX-512 one (VPOPCNTDQ), a
**     NEON one (VCNT) and a scalar twin give identical integers, hence
**     identical distances. The rotation's AVX2 twin does
**     the same butterflies, so codes never depend on the CPU. Every AVX2
**     function ends with vzeroupper (GCC does not add it for target
**     attributes; without it the scalar code that follows ran 3-7x slower).
**   - cosine: vectors and queries are normalised first, and 1-cos is
**     estimated as |a-b|^2/2, which for near neighbours is more accurate
**     than 1 - <a,b> on quantized vectors.
**
** Scale of the estimates (same as colvecDistance's exact values):
**   l2 -> Euclidean distance (sqrt of the clamped squared estimate),
**   cosine -> 1 - cos (clamped at 0), dot -> -(a.b).
**   A zero vector under cosine is estimated at 0.5 (exact value 1.0).
**
** Serialized form (little-endian, 28-byte header, versioned):
**   0  "CVQZ"          magic
**   4  u16 version     COLVEC_QUANT_VERSION
**   6  u8  type        ColvecQuantType
**   7  u8  metric      ColvecMetric (l2, cosine or dot)
**   8  u32 nDim        1..COLVEC_MAX_DIM
**   12 u32 nRound      rotation rounds (bit: 3, else 0)
**   16 u64 seed        rotation seed (bit; else 0)
**   24 u32 nFloat      float32 parameters that follow
**   28 f32[nFloat]     int: nDim minima then nDim scales; bit: the centroid
**   .. u32 checksum    FNV-1a of every byte before it
**
** Code layout (colvecQuantCodeBytes bytes per vector, byte-aligned, no
** alignment needed):
**   int8: nDim bytes, then f32 factor. int4: (nDim+1)/2 bytes, low nibble
**   first, then f32 factor. bit: nPad/8 bytes of sign bits (LSB-first), then
**   f32 f0 and f32 f1 (see colvec_quant_bit.c).
*/
#ifndef COLVEC_QUANT_H
#define COLVEC_QUANT_H

#include "colvec_core.h"
#include "colvec_os.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct ColvecQuant ColvecQuant;
typedef struct ColvecQuantQuery ColvecQuantQuery;
typedef struct ColvecQuantMethods ColvecQuantMethods;
typedef struct ColvecQuantKernels ColvecQuantKernels;

/* Kinds of quantizer. The values are stored on disk: never renumber. */
typedef enum ColvecQuantType {
  COLVEC_QUANT_NONE = 0, /* no codes */
  COLVEC_QUANT_INT8 = 1, /* 8 bits per dimension */
  COLVEC_QUANT_INT4 = 2, /* 4 bits per dimension */
  COLVEC_QUANT_BIT = 3   /* RaBitQ, 1 bit per rotated dimension */
} ColvecQuantType;

/* Number of quantizer types (the highest ColvecQuantType plus one). */
#define COLVEC_QUANT_NTYPE 4

/* Version of the serialized form written by this code. */
#define COLVEC_QUANT_VERSION 1

/* Seed of the bit quantizer's rotation (a constant: determinism). */
#define COLVEC_QUANT_SEED 0x636f6c7665635251ULL

/* Rounds of sign flips + Walsh-Hadamard in the bit quantizer's rotation. */
#define COLVEC_QUANT_ROUNDS 3

/* Bytes of the serialized header (before the float parameters). */
#define COLVEC_QUANT_HEADER_BYTES 28

/*************************************************************************
** Interface to code in colvec_quant.c
*/

/*
** Trains a quantizer of type eType for nDim-dimensional vectors compared
** with eMetric (l2, cosine or dot), from nVec vectors; vector i starts at
** aVec + i*nStride (nStride counts floats, >= nDim). Deterministic: the same
** input gives the same quantizer, byte for byte. nVec may be 0.
** On success *ppQuant is set and must be freed with colvecQuantFree.
** Returns COLVEC_OK, COLVEC_RANGE (bad type, metric, dimension or stride;
** *ppQuant is NULL) or COLVEC_NOMEM.
*/
int colvecQuantTrain(ColvecQuantType eType, ColvecMetric eMetric, int nDim,
                     const float *aVec, int64_t nVec, int64_t nStride,
                     ColvecQuant **ppQuant);

/*
** colvecQuantTrain with an interrupt hook (NULL: none), asked every
** COLVEC_QUANT_TICK vectors; returns COLVEC_INTERRUPT (and no quantizer)
** when it says stop.
*/
int colvecQuantTrainWith(ColvecQuantType eType, ColvecMetric eMetric, int nDim,
                         const float *aVec, int64_t nVec, int64_t nStride,
                         const ColvecInterrupt *pInt, ColvecQuant **ppQuant);

/* Vectors trained between two questions to the interrupt hook. */
#define COLVEC_QUANT_TICK 4096

/*
** The training vectors training left out as outliers: *pn indices into
** them, ascending (NULL when *pn is 0). A quantizer that was deserialized
** has none. Valid until the quantizer is freed.
*/
const int64_t *colvecQuantOutliers(const ColvecQuant *pQuant, int64_t *pn);

/* Frees a quantizer (NULL is allowed). */
void colvecQuantFree(ColvecQuant *pQuant);

/* Type, metric and dimension of a quantizer. */
ColvecQuantType colvecQuantType(const ColvecQuant *pQuant);
ColvecMetric colvecQuantMetric(const ColvecQuant *pQuant);
int colvecQuantDim(const ColvecQuant *pQuant);

/* Bytes of one code (the same for every vector); 0 for COLVEC_QUANT_NONE. */
int colvecQuantCodeBytes(const ColvecQuant *pQuant);

/* Bytes that colvecQuantSerialize writes. */
int64_t colvecQuantSerializedBytes(const ColvecQuant *pQuant);

/*
** Writes the serialized form, exactly colvecQuantSerializedBytes() bytes,
** to aOut (caller-allocated).
*/
void colvecQuantSerialize(const ColvecQuant *pQuant, uint8_t *aOut);

/*
** Rebuilds a quantizer from n untrusted bytes. Every field is checked; any
** inconsistency (bad magic, unknown version, type or metric, wrong length,
** checksum mismatch, non-finite parameter) returns COLVEC_CORRUPT. Returns
** COLVEC_NOMEM on allocation failure. On success *ppQuant must be freed
** with colvecQuantFree; on error it is NULL.
*/
int colvecQuantDeserialize(const uint8_t *a, int64_t n, ColvecQuant **ppQuant);

/*
** Encodes nVec vectors (vector i at aVec + i*nStride floats) into
** consecutive codes of colvecQuantCodeBytes() bytes at aCode. Allocates one
** scratch buffer per call, not per vector. Returns COLVEC_OK or
** COLVEC_NOMEM (aCode then partly written).
*/
int colvecQuantEncodeBatch(const ColvecQuant *pQuant, const float *aVec,
                           int64_t nVec, int64_t nStride, uint8_t *aCode);

/*
** colvecQuantEncodeBatch asking hook pInt (NULL: none) before every
** COLVEC_QUANT_TICK vectors; COLVEC_INTERRUPT (codes partly written) when
** it says stop.
*/
int colvecQuantEncodeWith(const ColvecQuant *pQuant, const float *aVec,
                          int64_t nVec, int64_t nStride,
                          const ColvecInterrupt *pInt, uint8_t *aCode);

/* Encodes one vector; colvecQuantEncodeBatch with nVec = 1. */
int colvecQuantEncode(const ColvecQuant *pQuant, const float *aVec,
                      uint8_t *pCode);

/*
** Per-query state of the estimators. The caller owns the struct: zero it
** once, call colvecQuantQueryPrepare for each query (buffers are kept and
** reused when large enough), then colvecQuantQueryClear. The members are
** private to colvec_quant*.c. The quantizer must outlive the query.
*/
struct ColvecQuantQuery {
  const ColvecQuant *pQuant;          /* quantizer the query was prepared for */
  const ColvecQuantKernels *pKernels; /* code kernels this query runs */
  float *aWeight;    /* int: per-dimension weights; bit: rotated query */
  uint64_t *aPlane;  /* bit: 4 bit planes of the 4-bit query, nWord each */
  int nWeightAlloc;  /* floats allocated at aWeight */
  int nPlaneAlloc;   /* words allocated at aPlane */
  float rBase;       /* additive constant of the estimate (see the kernels) */
  float rLow;        /* bit: smallest rotated query coordinate */
  float rDelta;      /* bit: step of the 4-bit query quantization */
  float rSumQ;       /* bit: sum of the quantized rotated query */
  int eKernel;       /* COLVEC_QUANT_KERNEL_* ceiling (BEST: the quantizer's) */
  int16_t *aScale16; /* int8 scan: aWeight rounded to integers (see below) */
  int nScale16Alloc; /* int16 entries allocated at aScale16 */
  float rScale16;    /* int8 scan: aWeight[d] ~ rScale16 * aScale16[d] */
  int bScan;         /* aScale16 holds this query's integer weights */
};

/*
** Kernel sets of the quantized codes. As ceilings (colvecQuantQueryKernel,
** colvecQuantSetKernel): BEST allows every set the CPU runs, SCALAR only
** the portable one, AVX2 the AVX2 one at most (no AVX-512), AVX512 up to
** AVX-512, NEON the NEON one. As the eSet of a ColvecQuantKernels: which
** set it is. Never stored.
*/
#define COLVEC_QUANT_KERNEL_BEST 0   /* ceiling: the fastest the CPU runs */
#define COLVEC_QUANT_KERNEL_SCALAR 1 /* the portable kernels */
#define COLVEC_QUANT_KERNEL_AVX2 2   /* AVX2 (with FMA and POPCNT) */
#define COLVEC_QUANT_KERNEL_AVX512 3 /* AVX-512 F/BW/VL (+VPOPCNTDQ: bit) */
#define COLVEC_QUANT_KERNEL_NEON 4   /* aarch64 Advanced SIMD */

/*
** Prepares the estimator for query aQuery (nDim floats, not modified) and
** stores it in *pQuery, reusing its buffers. Returns COLVEC_OK, COLVEC_NOMEM
** or COLVEC_RANGE (type COLVEC_QUANT_NONE has no estimator). On error
** *pQuery is left unprepared (but still valid for Clear).
*/
int colvecQuantQueryPrepare(const ColvecQuant *pQuant, const float *aQuery,
                            ColvecQuantQuery *pQuery);

/* Frees the buffers of a query and zeroes it. */
void colvecQuantQueryClear(ColvecQuantQuery *pQuery);

/*
** Name of the fastest kernel quantizers use for codes ("avx512" for bit
** and int8 codes, "avx2", "neon" on aarch64, "scalar"), after
** COLVEC_KERNELS's cap.
*/
const char *colvecQuantKernelName(void);

/*
** Caps the kernels colvecQuantDistance uses for this query at eKernel (a
** COLVEC_QUANT_KERNEL_* ceiling; BEST by default), now and for the queries
** prepared with it later. For tests and benchmarks. Returns the name of
** the kernel set now in use: "scalar", "avx2", "avx512" (bit and int8
** codes) or "neon" ("scalar" while the query is unprepared).
*/
const char *colvecQuantQueryKernel(ColvecQuantQuery *pQuery, int eKernel);

/*
** Caps the kernels of pQuant itself at eKernel (a COLVEC_QUANT_KERNEL_*
** ceiling): those that encode vectors and prepare queries, and the default
** of queries prepared afterwards. For tests (codes and prepared queries do
** not depend on the kernels). Returns the name of the set now in use.
*/
const char *colvecQuantSetKernel(ColvecQuant *pQuant, int eKernel);

/*
** Estimated distance from the prepared query to one code, on the scale of
** the exact distance (see the top of this file). No allocation.
*/
float colvecQuantDistance(const ColvecQuantQuery *pQuery, const uint8_t *pCode);

/*
** Estimates for nCode codes given by pointer (codes of graph neighbours are
** scattered): aOut[i] = colvecQuantDistance(pQuery, apCode[i]), bit for
** bit. One call through the kernel table per batch, none per code.
*/
void colvecQuantDistanceBatch(const ColvecQuantQuery *pQuery,
                              const uint8_t *const *apCode, int nCode,
                              float *aOut);

/*
** Prepares the integer estimator of an exact scan on codes for a query
** colvecQuantQueryPrepare has just prepared: for int8 codes, the weights
** rounded to 16-bit integers (a common scale, the largest weight at
** most 32767 and small enough that no sum over nDim codes overflows 32
** bits), so that colvecQuantScanBatch takes an integer dot product of
** codes and weights instead of converting every byte to a float. Other
** types, weights that are not all finite, and more dimensions than 10
** bits of weight allow (COLVEC_QUANT_SCAN_MIN_STEPS) keep the float
** estimator.
** Returns COLVEC_OK or COLVEC_NOMEM (the query then keeps the float
** estimator, still prepared).
*/
int colvecQuantQueryPrepareScan(ColvecQuantQuery *pQuery);

/* Fewest integer steps the largest scan weight may get (10 bits of
** precision); wider vectors, whose sums would need fewer, keep the float
** estimator. */
#define COLVEC_QUANT_SCAN_MIN_STEPS 1024

/*
** Estimates for nCode codes given by pointer, for a scan that keeps the
** best of many codes: with int8 codes and colvecQuantQueryPrepareScan
** done, the integer estimator (the same value on every CPU: an exact
** integer sum), whose weights differ from the float ones by at most half
** a step, the largest weight over 1,024 to 32,767 steps (fewer the more
** dimensions; colvec_quant_int.c); else colvecQuantDistanceBatch.
*/
void colvecQuantScanBatch(const ColvecQuantQuery *pQuery,
                          const uint8_t *const *apCode, int nCode, float *aOut);

/*
** Nonzero when colvecQuantScanBatch on this prepared query runs an integer
** kernel of the query's own kernel set (AVX2, AVX-512). A graph search
** then estimates with it, which is faster than the float estimator; on
** other CPUs the portable integer kernel would be slower, so the search
** keeps the float one.
*/
int colvecQuantScanIsNative(const ColvecQuantQuery *pQuery);

/*
** The quantizer types for the SQL layer, by stored type id (0, 1, ...
** until NULL): the name quantize= takes ("none", "int8", "int4", "bit"),
** or NULL past the last type; and the default oversampling of searches on
** that type's codes (1.0 for an unknown type).
*/
const char *colvecQuantName(int eType);
double colvecQuantOversampling(int eType);

/*************************************************************************
** Private to colvec_quant*.c: the quantizer object, the methods of a
** quantizer type and the tables of code kernels.
**
** Adding a quantizer: a new file colvec_quant_<name>.c defines its
** ColvecQuantMethods, its type id goes into ColvecQuantType (and
** COLVEC_QUANT_NTYPE grows), one entry goes into the table at the top of
** colvec_quant.c, and its kernel sets into the tables of the instruction
** sets (at least the portable one, colvec_quant_scalar.c); nothing else in
** colvec branches on the type.
*/

/*
** One set of code kernels of one quantizer type, e.g. int8 with AVX2.
** The tables of the instruction sets hold them by type, fastest set first,
** the portable set (mCpu 0) last (colvec_quant_kernels.h); the first one
** the CPU runs and the ceilings allow is chosen once per quantizer. A type
** that needs more kernels (the bit rotation) embeds this struct as the
** first member of its own and casts back.
*/
struct ColvecQuantKernels {
  const char *zName; /* "scalar", "avx2", "avx512", "neon" */
  int eSet;          /* COLVEC_QUANT_KERNEL_SCALAR, _AVX2, _AVX512, _NEON */
  unsigned mCpu;     /* COLVEC_CPU_* bits the set needs (0: any CPU) */
  /* estimated distance from a prepared query to one code */
  float (*xDistance)(const ColvecQuantQuery *pQuery, const uint8_t *pCode);
  /* the same for nCode codes (see colvecQuantDistanceBatch) */
  void (*xDistanceBatch)(const ColvecQuantQuery *pQuery,
                         const uint8_t *const *apCode, int nCode, float *aOut);
  /* integer estimates of nCode codes (see colvecQuantScanBatch); NULL: the
  ** portable set's (types without an integer estimator have none at all) */
  void (*xScanBatch)(const ColvecQuantQuery *pQuery,
                     const uint8_t *const *apCode, int nCode, float *aOut);
};

/*
** The methods of one quantizer type. Every hook may assume validated
** arguments; NULL hooks are allowed only where marked (type NONE).
*/
struct ColvecQuantMethods {
  const char *zName;     /* quantize= name: "int8" */
  ColvecQuantType eType; /* stored type id */
  double rOversample;    /* default oversampling of searches on the codes */
  int nRound;            /* serialized "rounds" (bit: COLVEC_QUANT_ROUNDS) */
  int bSeeded;           /* non-zero: takes (and stores) a rotation seed */
  /*
  ** Sets nPad, nCodeByte, nParam, nScratch, nWeight and nPlane of a new
  ** quantizer from its nDim and eMetric.
  */
  void (*xLayout)(ColvecQuant *p);
  /* Builds aAux from the seed; COLVEC_OK or COLVEC_NOMEM. NULL: none. */
  int (*xSetup)(ColvecQuant *p);
  /* Checks deserialized (finite) parameters; COLVEC_CORRUPT if bad. NULL:
  ** every finite value is valid. */
  int (*xCheck)(const ColvecQuant *p);
  /* Sets aParam from nVec vectors (see colvecQuantTrainWith) except the
  ** nSkip outliers aSkip (ascending row indices); aTmp holds nScratch
  ** floats. COLVEC_OK, _NOMEM or _INTERRUPT. NULL: no parameters. */
  int (*xTrain)(ColvecQuant *p, const float *aVec, int64_t nVec,
                int64_t nStride, const int64_t *aSkip, int64_t nSkip,
                float *aTmp, const ColvecInterrupt *pInt);
  /* Writes the code of one vector (nCodeByte bytes); aTmp holds nScratch
  ** floats. NULL: no codes. */
  void (*xEncode)(const ColvecQuant *p, const float *aVec, uint8_t *pCode,
                  float *aTmp);
  /* Fills a query whose buffers hold nWeight floats and nPlane words.
  ** NULL: no estimator (colvecQuantQueryPrepare returns COLVEC_RANGE). */
  void (*xPrepare)(const ColvecQuant *p, const float *aQuery,
                   ColvecQuantQuery *pQuery);
  /* Fills a prepared query's aScale16 (nWeight entries) and rScale16;
  ** returns 0 when the weights cannot be rounded (not all finite, all
  ** zero, or too many dimensions). NULL: no integer estimator. */
  int (*xPrepareScan)(const ColvecQuant *p, ColvecQuantQuery *pQuery);
};

/* The methods of each type (colvec_quant_int.c, colvec_quant_bit.c). */
extern const ColvecQuantMethods colvecQuantInt8Methods;
extern const ColvecQuantMethods colvecQuantInt4Methods;
extern const ColvecQuantMethods colvecQuantBitMethods;

/* A trained quantizer. */
struct ColvecQuant {
  const ColvecQuantMethods *pMethods; /* its type */
  const ColvecQuantKernels *pKernels; /* its code kernels, chosen once */
  ColvecMetric eMetric;               /* l2, cosine or dot */
  int nDim;                           /* dimensions of the input vectors */
  int nPad;          /* dimensions of a code (bit: power of two >= 64) */
  int nCodeByte;     /* bytes per code */
  int nScratch;      /* floats of scratch encoding one vector needs */
  int nWeight;       /* floats at a prepared query's aWeight */
  int nPlane;        /* 64-bit words at a prepared query's aPlane */
  uint64_t iSeed;    /* rotation seed (bSeeded types; else 0) */
  int nParam;        /* floats at aParam (serialized) */
  float *aParam;     /* int: min[nDim], scale[nDim]; bit: centroid */
  float *aAux;       /* built by xSetup (bit: rotation signs), or NULL */
  int64_t *aOutlier; /* training: rows left out as outliers, ascending */
  int64_t nOutlier;  /* entries of aOutlier (0 when deserialized) */
};

/*
** Turns the kernels' partial result into the distance reported to callers.
** rBase + f0 - 2*rCross is the squared Euclidean estimate (l2, cosine), and
** rBase + f0 + rCross the inner-product estimate (dot); f0 is the code's
** stored factor. Returns Euclidean distance, 1-cos, or -dot; +infinity
** instead of NaN, so that a corrupt code ranks last and never breaks the
** caller's comparisons. Inline: it runs once per estimated distance.
*/
static inline float colvecQuantFinish(ColvecMetric eMetric, float rBase,
                                      float f0, float rCross) {
  float r;
  if (eMetric == COLVEC_METRIC_DOT) {
    r = -(rBase + f0 + rCross);
    return r == r ? r : HUGE_VALF;
  }
  r = rBase + f0 - 2.0f * rCross;
  if (r != r) return HUGE_VALF; /* NaN (corrupt code or query): last */
  if (r < 0.0f) r = 0.0f;
  if (eMetric == COLVEC_METRIC_COSINE) return 0.5f * r;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
  {
    /* x87 (i386): sqrtf leaves its result unrounded in an 80-bit register
    ** and the compiler takes it for a float, so the same estimate compared
    ** unequal to itself once stored; the volatile store rounds it */
    volatile float rRounded = sqrtf(r);
    return rRounded;
  }
#else
  return sqrtf(r);
#endif
}

/*
** How many codes ahead a batch kernel prefetches: in a graph search, all of
** a node's unvisited neighbours (at most 2M) are requested before the first
** is scored, measured ~10% faster than 4 ahead (50k x 1536, bit codes).
*/
#define COLVEC_QUANT_PREFETCH 64

/* Prefetches every cache line of the nByte-byte code at p. */
static inline void colvecQuantPrefetchCode(const uint8_t *p, int nByte) {
  int iLine;
  for (iLine = 0; iLine < nByte; iLine += 64)
    COLVEC_PREFETCH(p + iLine);
  COLVEC_PREFETCH(p + nByte - 1);
}

/*
** The loop of every batch kernel: aOut[i] = xOne(pQuery,
** apCode[i]), prefetching the code COLVEC_QUANT_PREFETCH places ahead
** (every cache line of it; the first ones before the loop). Always inlined
** with a constant xOne, so each code costs a direct call (or none), never
** one through a pointer.
*/
static inline __attribute__((always_inline)) void
colvecQuantBatchLoop(const ColvecQuantQuery *pQuery,
                     const uint8_t *const *apCode, int nCode, float *aOut,
                     float (*xOne)(const ColvecQuantQuery *, const uint8_t *)) {
  int i;
  int nByte = pQuery->pQuant->nCodeByte;
  for (i = 0; i < nCode && i < COLVEC_QUANT_PREFETCH; i++)
    colvecQuantPrefetchCode(apCode[i], nByte);
  for (i = 0; i < nCode; i++) {
    if (i + COLVEC_QUANT_PREFETCH < nCode) {
      colvecQuantPrefetchCode(apCode[i + COLVEC_QUANT_PREFETCH], nByte);
    }
    aOut[i] = xOne(pQuery, apCode[i]);
  }
}

/*
** Copies the nDim floats of v to aOut, dividing by the Euclidean norm when
** the metric is cosine (a zero vector stays zero; a vector of subnormals
** is divided in double). Here, not in colvec_quant.c, because the
** quantizer types' files call it and colvec_quant.c calls them.
*/
static inline void colvecQuantInput(const ColvecQuant *pQuant, const float *v,
                                    float *aOut) {
  int i;
  int n = pQuant->nDim;
  memcpy(aOut, v, sizeof(float) * (size_t)n);
  if (pQuant->eMetric == COLVEC_METRIC_COSINE) {
    double s = 0.0;
    for (i = 0; i < n; i++)
      s += (double)v[i] * v[i];
    if (s > 0.0) {
      float rInv = (float)(1.0 / sqrt(s));
      if (isfinite(rInv)) {
        for (i = 0; i < n; i++)
          aOut[i] *= rInv;
      } else {
        /* subnormal components: 1/|v| overflows a float, not a double */
        double rNorm = sqrt(s);
        for (i = 0; i < n; i++)
          aOut[i] = (float)((double)v[i] / rNorm);
      }
    }
  }
}

/* Stores r at p as a little-endian IEEE float32 (any alignment). */
static inline void colvecQuantPutF32(uint8_t *p, float r) {
  uint32_t u;
  memcpy(&u, &r, 4);
  p[0] = (uint8_t)u;
  p[1] = (uint8_t)(u >> 8);
  p[2] = (uint8_t)(u >> 16);
  p[3] = (uint8_t)(u >> 24);
}

/* Loads a little-endian 32-bit integer from p (inline: per-code factors). */
static inline uint32_t colvecQuantGet32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
         ((uint32_t)p[3] << 24);
}

/* Loads a little-endian IEEE float32 from p. */
static inline float colvecQuantGetF32(const uint8_t *p) {
  uint32_t u = colvecQuantGet32(p);
  float r;
  memcpy(&r, &u, 4);
  return r;
}

#endif /* COLVEC_QUANT_H */
