/*
** colvec_segfile.h — the segment file format: streaming writer, validating
** reader, checksums (SQLite-free). Implemented in colvec_segfile.c on top of
** colvec_os.h.
**
** A segment is an immutable file holding N rows of one table, column-wise,
** as a sequence of sections. All integers are little-endian.
**
**   offset 0     header (128 bytes)
**   offset 128   section bodies, each starting on a 64-byte boundary,
**                zero padding between them
**   tableOffset  section table: nSection entries of 64 bytes
**   fileSize     end of file (= tableOffset + 64 * nSection)
**
** Header (COLVEC_SEG_HEADER_SIZE bytes). Bytes 0..63 are a preamble whose
** layout and checksum rule are frozen for every format version, so that a
** reader can tell "written by a newer colvec" from "damaged":
**    0  u8[8] magic "COLVSEG\x1a"
**    8  u32   format version (COLVEC_SEG_VERSION)
**   12  u32   header size in bytes (128 in version 1)
**   16  u32   flags (none defined; must be 0)
**   20  u32   number of sections
**   24  u64   schema fingerprint (chosen by the caller, opaque here)
**   32  u64   row count N
**   40  u64   offset of the section table (64-aligned)
**   48  u64   file size in bytes
**   56  u64   checksum: colvecSegfileHash over the header with this field
**             zeroed, then over bytes [tableOffset, fileSize)
**   64  ...   reserved, zero
**
** Section table entry (COLVEC_SEG_ENTRY_SIZE bytes):
**    0  u32   kind (COLVEC_SEG_*; 0 is invalid, unknown kinds are allowed)
**    4  u32   column index (meaning is the caller's; 0 for ROWIDS)
**    8  u32   element size or stride in bytes (0 = byte stream)
**   12  u32   flags (COLVEC_SEGF_*)
**   16  u64   offset (64-aligned, >= header size, after the previous
**             section's end)
**   24  u64   length in bytes, padding excluded
**   32  u64   checksum: colvecSegfileHash of the section's bytes
**   40  ...   reserved, zero
**
** Rules checked on open (and enforced by the writer) for known kinds, with
** N the row count:
**   ROWIDS        elemsize 8, length 8*N (int64, strictly ascending: verify)
**   ATTR_FIXED    elemsize 8, length 8*N (int64, or double with SEGF_REAL)
**   ATTR_VAROFFSETS elemsize 8, length 8*(N+1): row i's bytes are
**                 [off[i], off[i+1]) of the ATTR_VARBYTES section of the same
**                 column (monotonic, off[0]=0, off[N]=its length: verify)
**   ATTR_VARBYTES elemsize 0, any length
**   NULLBITMAP    elemsize 0, length (N+7)/8, bit i (LSB-first) set = NULL
**   VECTORS       elemsize 1..COLVEC_SEG_MAX_ELEM (bytes per vector),
**                 length N*elemsize
**   CODES         elemsize 1..COLVEC_SEG_MAX_ELEM (bytes per code),
**                 length N*elemsize
**   GRAPH         any elemsize, any length (layout owned by the HNSW code)
**   EXACT         elemsize 4, a multiple of 4 bytes: u32 row numbers,
**                 strictly ascending, below N (checked by the index code)
**   RECALL        elemsize 0, any length (layout owned by the index code)
** Older readers skip the kinds they do not know (EXACT and RECALL came
** without a format version change: a reader that ignores them searches
** the segment as before).
** A (kind, column) pair appears at most once.
**
** Checksums of the header and table are verified on every open; section
** checksums only by colvecSegfileVerify() (integrity-check, and the first open
** in a process of an embedded table's cache file), so opening a multi-GB
** segment costs a few reads, not a pass over the file.
**
** Result codes: COLVEC_CORRUPT for a damaged or truncated file (message
** names the file and what is wrong); COLVEC_ERROR for a file written in a
** format version this build does not read; COLVEC_IOERR for a failing
** system call; COLVEC_NOMEM; COLVEC_RANGE/COLVEC_ERROR for misuse.
*/
#ifndef COLVEC_SEGFILE_H
#define COLVEC_SEGFILE_H

#include "colvec_core.h"
#include "colvec_store.h"

typedef struct ColvecHash ColvecHash;
typedef struct ColvecSeg ColvecSeg;
typedef struct ColvecSegSection ColvecSegSection;
typedef struct ColvecSegWriter ColvecSegWriter;

#define COLVEC_SEG_MAGIC "COLVSEG\x1a" /* 8 bytes, no NUL stored */
#define COLVEC_SEG_VERSION 1           /* format version written and read */
#define COLVEC_SEG_HEADER_SIZE 128     /* bytes of the version-1 header */
#define COLVEC_SEG_ENTRY_SIZE 64       /* bytes of one section table entry */
#define COLVEC_SEG_ALIGN 64            /* alignment of every section */
#define COLVEC_SEG_MAX_SECTION 16384   /* most sections a file may have */
/* Largest vector or code element: a float vector of COLVEC_MAX_DIM. */
#define COLVEC_SEG_MAX_ELEM (4 * COLVEC_MAX_DIM)

/* Section kinds. Values are stored in files: never renumber. */
#define COLVEC_SEG_ROWIDS 1          /* sorted int64 rowids */
#define COLVEC_SEG_ATTR_FIXED 2      /* int64 or double per row */
#define COLVEC_SEG_ATTR_VAROFFSETS 3 /* N+1 int64 offsets into VARBYTES */
#define COLVEC_SEG_ATTR_VARBYTES 4   /* concatenated text/blob values */
#define COLVEC_SEG_NULLBITMAP 5      /* one bit per row, 1 = NULL */
#define COLVEC_SEG_VECTORS 6         /* N x stride original vectors */
#define COLVEC_SEG_CODES 7           /* N x stride quantized codes */
#define COLVEC_SEG_GRAPH 8           /* HNSW graph, HNSW's own layout */
#define COLVEC_SEG_QUANT 9           /* trained quantizer, its own layout */
#define COLVEC_SEG_EXACT 10          /* u32 rows the codes leave out */
#define COLVEC_SEG_RECALL 11         /* the index's measured recall */

/* Section flags. */
#define COLVEC_SEGF_REAL 0x0001  /* ATTR_FIXED holds doubles, not int64 */
#define COLVEC_SEGF_KNOWN 0x0001 /* every flag this version defines */

/* Access modes of colvecSegfileOpen(). */
#define COLVEC_SEG_MMAP 0 /* map the file; stable pointers into it */
#define COLVEC_SEG_FILE 1 /* pread into caller buffers */

/*
** The streaming 64-bit checksum: XXH64 with seed 0 (the same value as
** `xxhsum -H1` prints), fed in pieces of any size. Fields are internal.
*/
struct ColvecHash {
  uint64_t v[4];    /* the four lane accumulators */
  uint64_t nTotal;  /* bytes fed so far */
  uint8_t aBuf[32]; /* bytes of an incomplete 32-byte stripe */
  int nBuf;         /* bytes used in aBuf */
};

/* One section, as described by the section table (decoded). */
struct ColvecSegSection {
  uint32_t eKind;     /* COLVEC_SEG_* */
  uint32_t iColumn;   /* column index */
  uint32_t nElemSize; /* element size or stride in bytes; 0 = bytes */
  uint32_t flags;     /* COLVEC_SEGF_* */
  int64_t iOffset;    /* file offset of the first byte */
  int64_t nByte;      /* length in bytes, padding excluded */
  uint64_t cksum;     /* colvecSegfileHash of the bytes */
};

/*************************************************************************
** Checksum.
*/
void colvecHashInit(ColvecHash *pHash);
void colvecHashUpdate(ColvecHash *pHash, const void *p, int64_t n);
uint64_t colvecHashFinal(const ColvecHash *pHash);
uint64_t colvecSegfileHash(const void *p, int64_t n);

/*************************************************************************
** Writer.
*/
int colvecSegfileWriterOpen(const ColvecStore *pStore, const char *zTmpPath,
                            uint64_t fingerprint, ColvecSegWriter **ppWriter,
                            ColvecErr *pErr);
int colvecSegfileWriterBegin(ColvecSegWriter *p, uint32_t eKind,
                             uint32_t iColumn, uint32_t nElemSize,
                             uint32_t flags);
int colvecSegfileWriterAppend(ColvecSegWriter *p, const void *pData, int64_t n);
int colvecSegfileWriterEnd(ColvecSegWriter *p);
int colvecSegfileWriterFinish(ColvecSegWriter *p, uint64_t nRow,
                              ColvecErr *pErr);
void colvecSegfileWriterAbort(ColvecSegWriter *p);
const char *colvecSegfileWriterErrmsg(ColvecSegWriter *p);
int colvecSegfileWriterErrno(ColvecSegWriter *p);

/*************************************************************************
** Reader.
*/
int colvecSegfileOpen(const ColvecStore *pStore, const char *zPath, int eAccess,
                      int ePrefault, ColvecSeg **ppSeg, ColvecErr *pErr);
void colvecSegfileClose(ColvecSeg *pSeg);
/*
** The access mode a segment was opened in: the one asked for, except that a
** segment too large for the address space (mapping refused with ENOMEM,
** e.g. a multi-gigabyte file in a 32-bit process) is read with pread
** (COLVEC_SEG_FILE) instead. colvecSegfileMapFallbacks() counts those opens in
** this process (colvec_debug() shows it).
*/
int colvecSegfileAccess(const ColvecSeg *pSeg);
int colvecSegfileMapFallbacks(void);
uint64_t colvecSegfileRowCount(const ColvecSeg *pSeg);
uint64_t colvecSegfileFingerprint(const ColvecSeg *pSeg);
uint32_t colvecSegfileVersion(const ColvecSeg *pSeg);
int64_t colvecSegfileFileSize(const ColvecSeg *pSeg);
uint64_t colvecSegfileHeaderChecksum(const ColvecSeg *pSeg);
/* The identity (colvecOsFileStat) of the file as it was when opened; not
** valid (bValid 0) for a memory file. */
const ColvecFileId *colvecSegfileFileId(const ColvecSeg *pSeg);
int64_t colvecSegfileTableOffset(const ColvecSeg *pSeg);
int colvecSegfileSectionCount(const ColvecSeg *pSeg);
const ColvecSegSection *colvecSegfileSection(const ColvecSeg *pSeg, int i);
const ColvecSegSection *colvecSegfileFind(const ColvecSeg *pSeg, uint32_t eKind,
                                          uint32_t iColumn);
const char *colvecSegfileKindName(uint32_t eKind);
const void *colvecSegfileData(const ColvecSeg *pSeg,
                              const ColvecSegSection *pSec);
int colvecSegfileRead(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                      int64_t iOff, void *pBuf, int64_t n, ColvecErr *pErr);
int colvecSegfileReadElem(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                          int64_t iElem, void *pBuf, ColvecErr *pErr);
int colvecSegfileReadInt64(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                           int64_t iElem, int64_t *pVal, ColvecErr *pErr);
int colvecSegfileReadDouble(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                            int64_t iElem, double *pVal, ColvecErr *pErr);
int colvecSegfileAdvise(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                        int64_t iOff, int64_t n, int eAdvice);
int colvecSegfileScan(ColvecSeg *pSeg, const ColvecSegSection *pSec,
                      int (*xChunk)(void *pCtx, const uint8_t *a, int64_t n),
                      void *pCtx, ColvecErr *pErr);
int colvecSegfileVerify(ColvecSeg *pSeg, ColvecErr *pErr);

/*
** colvecSegfileVerify asking hook pInt (NULL: none) before each megabyte it
** reads; returns COLVEC_INTERRUPT when the hook says stop.
*/
int colvecSegfileVerifyWith(ColvecSeg *pSeg, const ColvecInterrupt *pInt,
                            ColvecErr *pErr);

/*************************************************************************
** Copy (online backup).
*/

/*
** Copies the whole file of open segment pSeg to a new file zTmpPath of
** store pTo (".tmp", created exclusively), fsyncs it and renames it to the name
** without ".tmp"; the caller fsyncs the folder. Reads the mapping or the
** open descriptor, never the path, so a file deleted since pSeg was opened
** is still copied. Asks pInt (NULL: none) before each megabyte. Returns
** COLVEC_OK, or an error with pErr set and no file left behind.
*/
int colvecSegfileCopyTo(ColvecSeg *pSeg, const ColvecStore *pTo,
                        const char *zTmpPath, const ColvecInterrupt *pInt,
                        ColvecErr *pErr);

#endif /* COLVEC_SEGFILE_H */
