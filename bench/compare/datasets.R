# Data side of the classic, datasets and quarterly suites (bench/compare):
# writes R's data sets as files of values, one per line, in time order.
#
# Usage: Rscript datasets.R DIR NAME...
#   DIR/NAME.txt  written for each NAME, a ts of package datasets or, failing
#                 that, of package forecast (gas, wineind, woolyrnq); its
#                 values as.numeric, 17 significant digits
#   DIR/NAME.start  its start(), year and period, as "year,period" (the
#                 harness's -dated times)
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript datasets.R DIR NAME...")
for (name in args[-1]) {
  y <- tryCatch(get(name, envir = asNamespace("datasets")), error = function(err) {
    e <- new.env()
    suppressWarnings(data(list = name, package = "forecast", envir = e))
    e[[name]]
  })
  if (is.null(y)) stop(sprintf("%s is in neither datasets nor forecast", name))
  st <- start(y)
  writeLines(sprintf("%d,%d", as.integer(st[1]), as.integer(if (length(st) > 1) st[2] else 1)), file.path(args[1], paste0(name, ".start")))
  y <- as.numeric(y)
  if (any(!is.finite(y))) stop(sprintf("%s has values that are not finite", name))
  writeLines(format(y, digits = 17, trim = TRUE), file.path(args[1], paste0(name, ".txt")))
}
