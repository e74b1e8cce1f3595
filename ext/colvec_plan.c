/*
** colvec_plan.c — encoding and decoding of the xBestIndex plan (idxStr);
** the grammar is in colvec_plan.h.
*/
#include "colvec_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operator names, indexed by ColvecPlanOp. */
static const char *const planOpNames[COLVEC_OP_COUNT] = {
    "MATCH", "K",         "LIMIT",      "OFFSET",    "OVERSAMPLING", "RESCORE",
    "EF",    "DISTANCE<", "DISTANCE<=", "DISTANCE>", "DISTANCE>=",   "EQ",
    "NE",    "LT",        "LE",         "GT",        "GE",           "IS",
    "ISNOT", "ISNULL",    "NOTNULL",    "LIKE",      "GLOB",         "IN"};

/* Name of an operator; "?" for an out-of-range value. */
const char *colvecPlanOpName(ColvecPlanOp eOp) {
  if ((int)eOp < 0 || eOp >= COLVEC_OP_COUNT) return "?";
  return planOpNames[eOp];
}

/* Returns non-zero when operator eOp applies to a column (MATCH and the
** filter operators); the KNN parameters and distance bounds take none. */
int colvecPlanOpHasCol(ColvecPlanOp eOp) {
  return eOp == COLVEC_OP_MATCH || eOp >= COLVEC_OP_EQ;
}

/* Encodes a plan as idxStr; see header. */
int colvecPlanEncode(const ColvecPlan *p, char **pz) {
  /* "scan"/"knn" + per arg: space, name (<= 12), '@', column (<= 11) */
  int64_t nAlloc = 8 + (int64_t)p->nArg * 26;
  char *z = colvecMalloc(nAlloc);
  int64_t n;
  int i;
  *pz = NULL;
  if (z == NULL) return COLVEC_NOMEM;
  n = snprintf(z, (size_t)nAlloc, "%s", p->bKnn ? "knn" : "scan");
  for (i = 0; i < p->nArg; i++) {
    const ColvecPlanArg *pArg = &p->aArg[i];
    n += snprintf(&z[n], (size_t)(nAlloc - n), " %s",
                  colvecPlanOpName(pArg->eOp));
    if (colvecPlanOpHasCol(pArg->eOp)) {
      if (pArg->iCol == COLVEC_PLAN_ROWID) {
        n += snprintf(&z[n], (size_t)(nAlloc - n), "@r");
      } else if (pArg->iCol == COLVEC_PLAN_TEXTID) {
        n += snprintf(&z[n], (size_t)(nAlloc - n), "@i");
      } else {
        n += snprintf(&z[n], (size_t)(nAlloc - n), "@%d", pArg->iCol);
      }
    }
  }
  *pz = z;
  return COLVEC_OK;
}

/*
** Parses one argument token z[0..n-1] ("EQ@3", "K", "GE@r") into *pArg.
** Returns COLVEC_OK or COLVEC_ERROR.
*/
static int planDecodeArg(const char *z, int n, ColvecPlanArg *pArg) {
  int nName = 0;
  int e;
  while (nName < n && z[nName] != '@')
    nName++;
  for (e = 0; e < COLVEC_OP_COUNT; e++) {
    if ((int)strlen(planOpNames[e]) == nName &&
        memcmp(planOpNames[e], z, (size_t)nName) == 0) {
      break;
    }
  }
  if (e == COLVEC_OP_COUNT) return COLVEC_ERROR;
  pArg->eOp = (ColvecPlanOp)e;
  pArg->iCol = COLVEC_PLAN_NOCOL;
  if (!colvecPlanOpHasCol(pArg->eOp)) {
    return nName == n ? COLVEC_OK : COLVEC_ERROR;
  }
  if (nName + 1 >= n) return COLVEC_ERROR;
  if (n == nName + 2 && z[nName + 1] == 'r') {
    pArg->iCol = COLVEC_PLAN_ROWID;
    return COLVEC_OK;
  }
  if (n == nName + 2 && z[nName + 1] == 'i') {
    pArg->iCol = COLVEC_PLAN_TEXTID;
    return pArg->eOp == COLVEC_OP_EQ ? COLVEC_OK : COLVEC_ERROR;
  }
  {
    int i, iCol = 0;
    for (i = nName + 1; i < n; i++) {
      if (z[i] < '0' || z[i] > '9' || iCol > 100000) return COLVEC_ERROR;
      iCol = iCol * 10 + (z[i] - '0');
    }
    pArg->iCol = iCol;
  }
  return COLVEC_OK;
}

/* Decodes idxStr; see header. */
int colvecPlanDecode(const char *z, ColvecPlan *p) {
  int i = 0;
  memset(p, 0, sizeof(*p));
  if (z == NULL) return COLVEC_ERROR;
  if (strncmp(z, "knn", 3) == 0 && (z[3] == 0 || z[3] == ' ')) {
    p->bKnn = 1;
    i = 3;
  } else if (strncmp(z, "scan", 4) == 0 && (z[4] == 0 || z[4] == ' ')) {
    i = 4;
  } else {
    return COLVEC_ERROR;
  }
  while (z[i] == ' ') {
    int iStart = ++i;
    while (z[i] != 0 && z[i] != ' ')
      i++;
    if (p->nArg >= COLVEC_PLAN_MAX_ARG) return COLVEC_ERROR;
    if (planDecodeArg(&z[iStart], i - iStart, &p->aArg[p->nArg]) != COLVEC_OK) {
      return COLVEC_ERROR;
    }
    p->nArg++;
  }
  return z[i] == 0 ? COLVEC_OK : COLVEC_ERROR;
}
