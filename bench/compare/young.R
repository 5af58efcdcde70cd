# The young forecast's drift rule (design.md, "Young series";
# docs/benchmarks.md, "Short series"), measured with R's own methods on
# training values only: NN3's training columns cut to their first n values
# and every univariate series of R's datasets and forecast packages of at
# least 16 values without NAs cut at four origins, forecast H steps by
# ses, thetaf, and thetaf only where the mean increment differs from zero
# by Student's t test at the 5 % level (else ses).
#
#   Rscript bench/compare/young.R ../shared/data/nn3/nn3_A_train.csv
suppressMessages(library(forecast))
args <- commandArgs(trailingOnly = TRUE)
nn3 <- read.csv(if (length(args) > 0) args[1] else "../shared/data/nn3/nn3_A_train.csv", check.names = FALSE)
N <- lapply(nn3, function(x) x[!is.na(x)])
S <- list()
for (s in c(ls("package:datasets"), ls("package:forecast"))) {
  x <- tryCatch(get(s), error = function(e) NULL)
  if (is.ts(x) && is.null(dim(x)) && length(x) >= 16 && !any(is.na(x)) && !(s %in% names(S))) S[[s]] <- as.numeric(x)
}
smape <- function(a, f) mean(200 * abs(a - f) / (abs(a) + abs(f)))
mase <- function(a, f, tr) mean(abs(a - f)) / mean(abs(diff(tr)))
evident <- function(y) {
  d <- diff(y)
  if (sd(d) == 0) return(mean(d) != 0)
  abs(mean(d)) / (sd(d) / sqrt(length(d))) > qt(0.975, length(d) - 1)
}
run <- function(name, L, origins, H, ns) {
  for (n in ns) {
    res <- NULL
    for (x in L) {
      if (length(x) < n + H) next
      os <- if (origins) unique(round(seq(1, length(x) - n - H + 1, length.out = 4))) else 1
      for (o in os) {
        tr <- ts(x[o:(o + n - 1)]); te <- x[(o + n):(o + n + H - 1)]
        if (mean(abs(diff(tr))) == 0) next
        f1 <- ses(tr, h = H)$mean; f2 <- thetaf(tr, h = H)$mean
        f3 <- if (evident(as.numeric(tr))) f2 else f1
        res <- rbind(res, c(mase(te, f1, tr), mase(te, f2, tr), mase(te, f3, tr),
                            smape(te, f1), smape(te, f2), smape(te, f3), evident(as.numeric(tr))))
      }
    }
    cat(sprintf("%-8s %3d %3d %4d | %6.3f %6.3f %6.3f | %6.2f %6.2f %6.2f | %4.2f\n", name, n, H, nrow(res),
                mean(res[, 1]), mean(res[, 2]), mean(res[, 3]), mean(res[, 4]), mean(res[, 5]), mean(res[, 6]), mean(res[, 7])))
  }
}
cat("set        n   H cuts |   MASE: ses thetaf   rule | sMAPE: ses thetaf  rule | passes\n")
for (H in c(6, 18)) {
  run("NN3", N, FALSE, H, c(4, 6, 10, 14, 20, 30))
  run("datasets", S, TRUE, H, c(4, 6, 10, 14, 20, 30))
}
