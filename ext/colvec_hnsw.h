/*
** colvec_hnsw.h — the HNSW graph of one immutable segment (SQLite-free).
**
** Nodes are the row positions 0..N-1 of a segment. The graph is built once,
** at compaction, its links chosen on exact float32 distances supplied by
** the caller (colvec_hnsw_build.c), serialised as one section of the segment
** file, and
** searched in place from the read-only mapping with whatever query distance
** the caller supplies (normally a quantized, asymmetric estimate).
**
** LAYOUT (in memory and on disk, the same words)
**
** All words are uint32, little-endian on disk. The section is:
**
**   header     16 words (64 bytes):
**                0 magic 0x4E485643 ("CVHN")   4 nLevel (max level + 1;
**                1 format version (1)             0 when N is 0)
**                2 N (node count)              5 entry node id
**                3 M                           6 nUpper (nodes with level>0)
**                                              7 nUpList (upper-level lists)
**                8..15 zero (reserved)
**   level 0    N records of 1+2M words: link count, then 2M node ids
**              (unused slots zero). Fixed stride, so node i's record is at
**              word i*(1+2M): no per-node offset table.
**   directory  nUpper records of 3 words, one per node with level>0, in
**              ascending node order: node id, level, index of its level-1
**              list in the upper area (its level-L list follows at +L-1).
**   upper      nUpList lists of 1+M words: link count, then M links. Links
**              on levels >= 1 are DIRECTORY INDICES, not node ids, so upper
**              levels are walked without any node -> directory lookup.
**
** Selection of links follows hnswlib: candidates from a beam search of
** width efConstruction, pruned by its neighbour-selection heuristic to M;
** a neighbour whose list is full re-runs the heuristic on its old links plus
** the new one (capacity M above level 0, 2M on level 0). The beam searches
** may run on a cheaper estimate of the distance (ColvecHnswEstimate, e.g.
** on quantized codes); their candidates are then rescored with the exact
** distance, and every link is chosen on exact distances.
**
** DETERMINISM. Levels come from a hash of the rowid (colvecHnswLevel) or from
** the caller; nodes are inserted in node order, in batches of nBatch: every
** node of a batch searches the graph as it was at the start of the batch
** (in parallel when nThread > 1), also considers the earlier nodes of its own
** batch as candidates, and the back-links are then applied in node order
** (in parallel across distinct target nodes). The bytes therefore depend on
** the data, M, efConstruction, nBatch and the estimate, if any — never on
** nThread or timing.
** nBatch = 1 is the classic one-at-a-time insertion.
**
** SAFETY. colvecHnswOpen() validates the header, the directory and every
** upper-level list, and (unless COLVEC_HNSW_OPEN_LAZY) every level-0 record.
** Search also checks each level-0 record it reads, so a lazily opened corrupt
** graph gives COLVEC_CORRUPT, never an out-of-bounds read. Every search
** visits a node at most once per level, so corrupt links cannot loop.
*/
#ifndef COLVEC_HNSW_H
#define COLVEC_HNSW_H

#include "colvec_core.h"

#define COLVEC_HNSW_DEFAULT_M 16     /* links per node above level 0 */
#define COLVEC_HNSW_DEFAULT_EFC 200  /* efConstruction */
#define COLVEC_HNSW_DEFAULT_BATCH 32 /* nodes inserted per build batch */
#define COLVEC_HNSW_MAX_M 128        /* largest M accepted */
#define COLVEC_HNSW_MAX_LEVEL 30     /* highest level a node may have */
#define COLVEC_HNSW_MAX_EFC 4096     /* largest efConstruction accepted */
#define COLVEC_HNSW_MAX_BATCH 1024   /* largest nBatch accepted */
#define COLVEC_HNSW_MAX_THREAD 64    /* largest nThread accepted */

#define COLVEC_HNSW_MIN_DEFAULT_EF 64   /* default ef of small graphs */
#define COLVEC_HNSW_MAX_DEFAULT_EF 1024 /* largest default ef */

/*
** The default beam width (ef) of a search of a graph of nNode nodes:
** COLVEC_HNSW_MIN_DEFAULT_EF up to 131,072 nodes, then the cube root of
** 2 x nNode (93 at 400,000 nodes, 112 at 693,589, the most rows a
** float[768] segment holds), so that a large graph keeps about the recall
** of a small one at the defaults (at ef 64, a graph of 400,000 x 768 rows
** measured recall@10 0.94 where one of 50,000 measured 0.987).
*/
static inline int colvecHnswDefaultEf(int64_t nNode) {
  int64_t e = COLVEC_HNSW_MIN_DEFAULT_EF;
  while (e < COLVEC_HNSW_MAX_DEFAULT_EF && e * e * e < 2 * nNode)
    e++;
  return (int)e;
}

#define COLVEC_HNSW_MAGIC 0x4E485643u /* "CVHN" as little-endian bytes */
#define COLVEC_HNSW_VERSION 1         /* serialised format version */
#define COLVEC_HNSW_HEADER_WORDS 16   /* header size in uint32 words */

/* Flag for colvecHnswOpen(): skip the full level-0 scan (search checks). */
#define COLVEC_HNSW_OPEN_LAZY 0x01

typedef struct ColvecHnsw ColvecHnsw;
typedef struct ColvecHnswConfig ColvecHnswConfig;
typedef struct ColvecHnswEstimate ColvecHnswEstimate;
typedef struct ColvecHnswPair ColvecHnswPair;
typedef struct ColvecHnswQuery ColvecHnswQuery;
typedef struct ColvecHnswSearch ColvecHnswSearch;

/* Build parameters. Zero in any field selects its default. */
struct ColvecHnswConfig {
  int nM;      /* links per node above level 0 (2..128; level 0 holds 2*nM) */
  int nEfC;    /* efConstruction: beam width while building (1..4096) */
  int nBatch;  /* nodes per insertion batch; part of the output's identity */
  int nThread; /* worker threads (1..64); never changes the output */
  void (*xPrefetch)(void *pCtx, uint32_t iNode); /* hint: node's data needed
                                                 ** soon (build's pCtx); NULL:
                                                 ** none; never changes the
                                                 ** output */
  ColvecInterrupt interrupt; /* asked before each node is inserted (on the
                             ** calling thread); stops the build with
                             ** COLVEC_INTERRUPT; zero: never */
  const ColvecHnswEstimate *pEstimate; /* cheaper distances for the beam
                                       ** searches, or NULL: xDist */
};

/*
** A cheaper estimate of the build's distances (e.g. on quantized codes),
** for its beam searches: each worker makes its own state (xNew, from the
** build's pCtx), prepares it for the node being inserted (xPrepare) and
** scores that node's distance to others with it (xDistBatch). The
** candidates a search finds are rescored with the exact xDist before any
** link is chosen, so only the search's path depends on the estimate. The
** estimate must be a function of the two nodes only (never of the worker
** or of timing), or the graph would depend on nThread.
*/
struct ColvecHnswEstimate {
  int (*xNew)(void *pCtx, void **ppState);       /* COLVEC_OK or _NOMEM */
  int (*xPrepare)(void *pState, uint32_t iNode); /* COLVEC_OK or _NOMEM */
  void (*xDistBatch)(void *pState, const uint32_t *aNode, int nNode,
                     float *aOut); /* estimates from the prepared node */
  void (*xFree)(void *pState);     /* NULL is allowed */
};

/*
** What a search needs from its caller. xDist is required; the others may be
** NULL. pCtx is passed to each of them unchanged. When xDistBatch is set,
** the beam search hands it each expanded node's unvisited neighbours at
** once (it must give exactly what xDist would, and prefetch as it likes)
** instead of calling xPrefetch and xDist per neighbour.
*/
struct ColvecHnswQuery {
  float (*xDist)(void *pCtx, uint32_t iNode);    /* query-to-node distance */
  void (*xPrefetch)(void *pCtx, uint32_t iNode); /* hint: node used soon */
  int (*xAccept)(void *pCtx, uint32_t iNode);    /* 0: traverse, never return */
  void *pCtx;                                    /* caller's context */
  void (*xDistBatch)(void *pCtx, const uint32_t *aNode, int nNode,
                     float *aOut); /* xDist of nNode nodes, or NULL */
  int bTwoHop; /* with xAccept, level 0: a rejected neighbour is not
               ** scored; its own neighbours that xAccept admits are
               ** taken in its place (ACORN-1's two-hop expansion), and
               ** the search may give up (ColvecHnswSearch.bGaveUp) */
  float rPass; /* bTwoHop: the share of all nodes xAccept admits */
  /* bTwoHop, or NULL: where the nodes xAccept admits are sparse near the
  ** query, writes up to nMax (2 x COLVEC_HNSW_MAX_M) of them, spread over
  ** the graph, to aSeed and returns how many; the search starts from the
  ** nearest of them, its beam twice as wide, instead of giving up */
  int (*xSeeds)(void *pCtx, uint32_t *aSeed, int nMax);
};

/* A (distance, id) pair: heap entries, candidates, results. */
struct ColvecHnswPair {
  float d;     /* distance to the query */
  uint32_t id; /* node id (level 0) or directory index (upper levels) */
};

/*************************************************************************
** Interface to code in colvec_hnsw.c (layout, serialisation, search)
*/

/*
** Each graph measures its own recall when it is built: COLVEC_RECALL_QUERIES
** of its rows (every nRow/COLVEC_RECALL_QUERIES-th) are searched as at the
** defaults (k = COLVEC_RECALL_K, the type's oversampling, ef 64, rescored)
** and compared with an exact scan. Below COLVEC_RECALL_FLOOR on the codes
** the segment is written without them (its graph traversed on the float32
** vectors), and below the floor on the vectors too without a graph (exact
** scans). The figures are stored with the segment (the index code's
** COLVEC_LAYOUT_RECALL part, a COLVEC_SEG_RECALL section), in the record
** below, so that colvec-inspect reads them without SQLite.
*/
#define COLVEC_RECALL_QUERIES 32
#define COLVEC_RECALL_K 10
#define COLVEC_RECALL_FLOOR 0.9

/* How a segment column is searched, as the recall measure chose. */
#define COLVEC_RECALL_CODES 0   /* graph on the codes (the default) */
#define COLVEC_RECALL_VECTORS 1 /* graph on the float32 vectors */
#define COLVEC_RECALL_EXACT 2   /* no graph: exact scans */

/* Bytes of the stored recall part (see colvecHnswRecallDecode). */
#define COLVEC_RECALL_BYTES 32

/* What a segment's graph measured when it was built. */
typedef struct ColvecHnswRecall ColvecHnswRecall;
struct ColvecHnswRecall {
  int nQuery;      /* rows searched as queries */
  int k;           /* neighbours asked for per query */
  int eUsed;       /* COLVEC_RECALL_*: how the segment is searched */
  double rCodes;   /* recall@k traversing the codes (-1: no codes) */
  double rVectors; /* recall@k on the float32 vectors (-1: not measured) */
};

/*
** Encodes *p as the stored record, COLVEC_RECALL_BYTES at a: u32 version,
** u32 queries, u32 k, u32 how the segment is searched (COLVEC_RECALL_*),
** then the recall on the codes and on the vectors, each a u64 of
** millionths plus one (0: not measured), so that no float is stored.
*/
void colvecHnswRecallEncode(const ColvecHnswRecall *p, uint8_t *a);

/*
** Decodes the stored record (n bytes at a) into *p. Returns COLVEC_OK, or
** COLVEC_CORRUPT when the bytes are not a valid record.
*/
int colvecHnswRecallDecode(const uint8_t *a, int64_t n, ColvecHnswRecall *p);

/* Level of the node holding rowid: a deterministic geometric draw, P=1/M. */
int colvecHnswLevel(uint64_t iRowid, int nM);

/* Opens serialised bytes (kept by reference: keep them alive until Free). */
int colvecHnswOpen(const uint8_t *aData, size_t nData, int flags,
                   ColvecHnsw **ppGraph);
void colvecHnswFree(ColvecHnsw *pGraph);       /* NULL is allowed */
int colvecHnswCheck(const ColvecHnsw *pGraph); /* full validation */
uint32_t colvecHnswNodeCount(const ColvecHnsw *pGraph);
int colvecHnswMaxLevel(const ColvecHnsw *pGraph); /* -1 when empty */
int64_t colvecHnswSerializedSize(const ColvecHnsw *pGraph);
int colvecHnswSerialize(const ColvecHnsw *pGraph, uint8_t *aOut, size_t nOut);

/* Reusable search scratch: one per thread, reused across queries. */
int colvecHnswSearchNew(ColvecHnswSearch **ppSearch);
void colvecHnswSearchFree(ColvecHnswSearch *pSearch); /* NULL is allowed */
int colvecHnswSearchReserve(ColvecHnswSearch *pSearch, uint32_t nNode, int nEf);

/* K nearest nodes: best min(k, ef, N) accepted nodes, ascending distance. */
int colvecHnswSearch(const ColvecHnsw *pGraph, const ColvecHnswQuery *pQuery,
                     int nEf, int k, ColvecHnswSearch *pSearch,
                     uint32_t *aOutNode, float *aOutDist, int *pnOut);

/*************************************************************************
** Interface to code in colvec_hnsw_build.c
**
** Builds the graph of nNode nodes. Node i's level is aLevel[i] when aLevel
** is not NULL, else colvecHnswLevel(aRowid[i], M) (aRowid NULL: rowid i).
** xDist(pCtx, a, b) is the exact distance between nodes a and b; with
** nThread > 1 it is called from several threads at once and must be safe
** for that. On success *ppGraph owns its memory (colvecHnswFree).
** pConfig->interrupt can stop the build (COLVEC_INTERRUPT, nothing kept).
*/
int colvecHnswBuild(const ColvecHnswConfig *pConfig, uint32_t nNode,
                    const uint8_t *aLevel, const uint64_t *aRowid,
                    float (*xDist)(void *pCtx, uint32_t a, uint32_t b),
                    void *pCtx, ColvecHnsw **ppGraph);

/*
** The same build in steps, for work an application paces: New takes the
** arguments of colvecHnswBuild (xDist and pCtx, and aLevel and aRowid when
** given, must stay valid until the builder is freed); each Step inserts
** the next nodes, at least nMax of them or all that are left, in whole
** batches (pConfig->nBatch), asking interrupt before each node; Count
** tells how many are in; Finish hands over the graph once all are in
** (COLVEC_RANGE before). The graph is byte for byte the one
** colvecHnswBuild makes. A Step that fails (COLVEC_NOMEM,
** COLVEC_INTERRUPT) leaves the builder unusable: Count is 0 from then on,
** and it can only be freed. Free releases everything (NULL allowed).
*/
typedef struct ColvecHnswBuilder ColvecHnswBuilder;
int colvecHnswBuilderNew(const ColvecHnswConfig *pConfig, uint32_t nNode,
                         const uint8_t *aLevel, const uint64_t *aRowid,
                         float (*xDist)(void *pCtx, uint32_t a, uint32_t b),
                         void *pCtx, ColvecHnswBuilder **pp);
int colvecHnswBuilderStep(ColvecHnswBuilder *p, uint32_t nMax,
                          ColvecInterrupt interrupt);
uint32_t colvecHnswBuilderCount(const ColvecHnswBuilder *p);
int colvecHnswBuilderFinish(ColvecHnswBuilder *p, ColvecHnsw **ppGraph);
void colvecHnswBuilderFree(ColvecHnswBuilder *p);

/*************************************************************************
** Internals shared by colvec_hnsw.c and colvec_hnsw_build.c only.
*/

/*
** A graph. The arrays point either into memory the graph owns (pOwned: a
** built graph or a private copy) or straight into the caller's serialised
** bytes, which are then never written.
*/
struct ColvecHnsw {
  uint32_t nNode;     /* nodes 0..nNode-1 */
  uint32_t nM;        /* link capacity of an upper-level list */
  uint32_t nM0;       /* link capacity of a level-0 list (2*nM) */
  uint32_t nStride0;  /* words per level-0 record (1+nM0) */
  uint32_t nStrideUp; /* words per upper-level list (1+nM) */
  int iMaxLevel;      /* level of the entry node; -1 when nNode is 0 */
  uint32_t iEntry;    /* entry node id */
  uint32_t iEntryUp;  /* directory index of iEntry (when iMaxLevel > 0) */
  uint32_t nUpper;    /* directory entries (nodes with level > 0) */
  uint32_t nUpList;   /* lists in the upper area */
  uint32_t *aLevel0;  /* nNode*nStride0 words */
  uint32_t *aUpDir;   /* nUpper*3 words: node id, level, first list */
  uint32_t *aUpLink;  /* nUpList*nStrideUp words */
  void *pOwned;       /* memory behind the arrays; NULL when in place */
};

/*
** Search scratch: a visited bit set; for a filtered search the
** candidate and result heaps, for an unfiltered one a sorted pool.
*/
struct ColvecHnswSearch {
  uint64_t *aVisit;      /* visited set: bit i%64 of word i/64 for node i */
  uint32_t nVisit;       /* words in aVisit */
  uint32_t *aTouched;    /* words of aVisit made non-zero since the last
                         ** reset (each once; room for nVisit) */
  uint32_t nTouched;     /* entries in aTouched */
  ColvecHnswPair *aCand; /* min-heap of nodes still to expand */
  uint32_t nCand;        /* entries in aCand */
  uint32_t nCandAlloc;   /* capacity of aCand (grows, never shrinks) */
  ColvecHnswPair *aTop;  /* the best accepted nodes: a max-heap during a
                         ** filtered search, ascending by (distance, id)
                         ** once colvecHnswSearchLayer returns */
  uint32_t nTop;         /* entries in aTop */
  uint32_t nTopAlloc;    /* capacity of aTop */
  uint64_t *aPool;       /* unfiltered search: sort keys of the best nodes
                         ** found (colvecHnswSortPairs' order), ascending */
  uint8_t *aDone;        /* aDone[i] != 0: aPool[i]'s links were expanded */
  uint32_t nPoolAlloc;   /* capacity of aPool and aDone */
  int bGaveUp;           /* a two-hop search gave up: the nodes it admits
                         ** are sparse near the query (under a quarter of
                         ** rPass among the start's two-hop neighbours)
                         ** and no seeds were given, or fewer than nEf
                         ** were reached; no result */
};

/* Zeroed graph with its directory filled from aLevel (levels <= MAX). */
int colvecHnswAlloc(uint32_t nNode, int nM, const uint8_t *aLevel,
                    ColvecHnsw **ppGraph);
/* Directory index of node iNode, or -1 when it has no upper levels. */
int64_t colvecHnswDirFind(const ColvecHnsw *pGraph, uint32_t iNode);
/* Words of the list of local id (node or directory index) on iLevel. */
uint32_t *colvecHnswLinks(const ColvecHnsw *pGraph, int iLevel, uint32_t id);
/* Greedy descent from directory index *piUp on levels iTop..iBottom (>=1). */
void colvecHnswGreedy(const ColvecHnsw *pGraph, const ColvecHnswQuery *pQuery,
                      int iTop, int iBottom, uint32_t *piUp, float *pdCur);
/* Beam search of width nEf on one level; result ascending in aTop. */
int colvecHnswSearchLayer(const ColvecHnsw *pGraph, int iLevel,
                          const ColvecHnswQuery *pQuery, uint32_t iStart,
                          float dStart, uint32_t nEf,
                          ColvecHnswSearch *pSearch);
/*
** Sorts aPair ascending by (distance, id), NaN last; aTmp: 2*nPair words of
** scratch. A NaN distance comes back as the default NaN, -0 as +0.
*/
void colvecHnswSortPairs(ColvecHnswPair *aPair, uint32_t nPair, uint64_t *aTmp);

#endif /* COLVEC_HNSW_H */
