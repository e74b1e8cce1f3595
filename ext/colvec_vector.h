/*
** colvec_vector.h — parsing, validating and printing vectors (SQLite-free).
**
** A vector value reaches colvec as a BLOB (raw little-endian elements) or as
** JSON text ('[0.1, 0.2, ...]'). These routines turn either into the
** column's binary form, refusing wrong lengths, NaN/Inf, out-of-range int8
** values and malformed JSON with a message for the caller to prefix with
** the column name. Implemented in colvec_vector.c.
*/
#ifndef COLVEC_VECTOR_H
#define COLVEC_VECTOR_H

#include "colvec_core.h"

/* Size of the message buffers these routines fill. */
#define COLVEC_VECTOR_ERRMAX 160

/*
** Parses JSON text z (n bytes, not necessarily NUL-terminated) holding an
** array of numbers into a newly allocated float array (*paOut, freed by the
** caller with colvecFree) of *pnOut elements. Returns COLVEC_OK, COLVEC_NOMEM,
** or COLVEC_ERROR with a description in zErr (e.g. "malformed JSON at
** offset 7"). Non-finite numbers are accepted here; see colvecVectorCheck.
** Numbers are read with '.' as the decimal point whatever the process's
** locale (LC_NUMERIC) says.
*/
int colvecJsonToFloats(const char *z, int n, float **paOut, int *pnOut,
                       char *zErr);

/*
** Converts nVal parsed JSON numbers into a vector of nDim elements of type
** eElem, written to aOut (colvecVectorBytes(eElem,nDim) bytes). f32: values
** must be finite; i8: integers in -128..127; bit: each value 0 or 1, packed
** LSB-first. Returns COLVEC_OK or COLVEC_ERROR with zErr set (wrong count,
** bad element).
*/
int colvecFloatsToVector(const float *aVal, int nVal, ColvecElem eElem,
                         int nDim, void *aOut, char *zErr);

/*
** Checks a binary vector of nByte bytes against a column of nDim elements of
** type eElem: the length must match and float32 elements must be finite.
** Returns COLVEC_OK or COLVEC_ERROR with zErr set.
*/
int colvecVectorCheck(const void *a, int nByte, ColvecElem eElem, int nDim,
                      char *zErr);

/*
** Writes vector a (nDim elements of eElem) as JSON text into a newly
** allocated NUL-terminated string (*pzOut, freed with colvecFree). Floats
** use the shortest form that reads back to the same float32, with '.' as
** the decimal point whatever the process's locale. Returns
** COLVEC_OK or COLVEC_NOMEM.
*/
int colvecVectorToJson(const void *a, ColvecElem eElem, int nDim, char **pzOut);

/* Kinds of number colvecTextToNumber finds. */
#define COLVEC_NUM_NONE 0    /* not a number: the text stays text */
#define COLVEC_NUM_INTEGER 1 /* an integer that fits in 64 bits (*piOut) */
#define COLVEC_NUM_REAL 2    /* any other number (*prOut) */

/*
** Reads SQL text z[0..n) as SQLite's numeric affinity does (what an INTEGER,
** REAL or NUMERIC column does with text, and sqlite3_value_numeric_type):
** optional spaces, sign, digits with an optional '.' and exponent (at least
** one digit in all), optional spaces, and nothing else; no hexadecimal. An
** integer literal that fits in 64 bits is COLVEC_NUM_INTEGER, every other
** number COLVEC_NUM_REAL (nearest double; out-of-range exponents give
** +-Inf or 0), anything else COLVEC_NUM_NONE. Independent of the locale.
** Returns COLVEC_OK with *peKind, *piOut, *prOut set, or COLVEC_NOMEM (only
** numbers longer than 128 bytes allocate).
*/
int colvecTextToNumber(const char *z, int n, int *peKind, int64_t *piOut,
                       double *prOut);

/* Name of an element type as written in CREATE ("float", "int8", "bit"). */
const char *colvecElemName(ColvecElem eElem);

#endif /* COLVEC_VECTOR_H */
