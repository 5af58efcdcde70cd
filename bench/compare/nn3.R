# NN3 side of the comparison harness (bench/compare): R forecast package
# methods on each series of a list, H-step point forecasts and 95 % intervals.
#
# Usage: Rscript nn3.R LIST.csv H FORECASTS.csv TIMES.csv ERRORS.csv
#   LIST.csv      series,path[,frequency]: one series per row, each path a
#                 file of its training values, one per line (the files
#                 streamd reads); frequency, when the column is there, the
#                 ts frequency of that series (else 12)
#   FORECASTS.csv written: method,series,h,mean,lo,hi
#   TIMES.csv     written: method,seconds (elapsed time of the fits and
#                 forecasts of that method over all series)
#   ERRORS.csv    written: method,series,message for each failed fit
#
# Every series is ts(x, frequency = 12) unless LIST.csv says otherwise. Methods: auto.arima, ets, thetaf
# (forecast's defaults), their combination "comb" (mean of the three point
# forecasts; band: mean of the three lower and of the three upper 95 %
# bounds), and the seasonal naive snaive.
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 5) stop("usage: Rscript nn3.R LIST.csv H FORECASTS.csv TIMES.csv ERRORS.csv")
lst <- read.csv(args[1], stringsAsFactors = FALSE)
H <- as.integer(args[2])

fits <- list(
  auto.arima = function(y) forecast(auto.arima(y), h = H, level = 95),
  ets        = function(y) forecast(ets(y), h = H, level = 95),
  thetaf     = function(y) thetaf(y, h = H, level = 95),
  snaive     = function(y) snaive(y, h = H, level = 95)
)

rows <- list()
errs <- list()
secs <- setNames(numeric(length(fits)), names(fits))
res <- list() # res[[method]][[series]] = data.frame(mean, lo, hi)

for (i in seq_len(nrow(lst))) {
  name <- lst$series[i]
  y <- ts(scan(lst$path[i], quiet = TRUE), frequency = if (is.null(lst$frequency)) 12 else lst$frequency[i])
  for (m in names(fits)) {
    t0 <- proc.time()[["elapsed"]]
    fc <- tryCatch(fits[[m]](y), error = function(e) e)
    secs[[m]] <- secs[[m]] + proc.time()[["elapsed"]] - t0
    if (inherits(fc, "error")) {
      errs[[length(errs) + 1]] <- data.frame(method = m, series = name, message = conditionMessage(fc))
      next
    }
    res[[m]][[name]] <- data.frame(mean = as.numeric(fc$mean),
                                   lo = as.numeric(fc$lower[, 1]),
                                   hi = as.numeric(fc$upper[, 1]))
  }
  parts <- lapply(c("auto.arima", "ets", "thetaf"), function(m) res[[m]][[name]])
  if (all(!vapply(parts, is.null, logical(1)))) {
    res[["comb"]][[name]] <- data.frame(
      mean = rowMeans(sapply(parts, function(p) p$mean)),
      lo = rowMeans(sapply(parts, function(p) p$lo)),
      hi = rowMeans(sapply(parts, function(p) p$hi)))
  } else {
    errs[[length(errs) + 1]] <- data.frame(method = "comb", series = name,
                                           message = "a component method failed")
  }
}

for (m in names(res)) {
  for (name in names(res[[m]])) {
    d <- res[[m]][[name]]
    rows[[length(rows) + 1]] <- data.frame(method = m, series = name, h = seq_len(nrow(d)),
                                           mean = d$mean, lo = d$lo, hi = d$hi)
  }
}
out <- if (length(rows)) do.call(rbind, rows) else
  data.frame(method = character(), series = character(), h = integer(),
             mean = numeric(), lo = numeric(), hi = numeric())
write.csv(out, args[3], row.names = FALSE, quote = FALSE)
secs[["comb"]] <- secs[["auto.arima"]] + secs[["ets"]] + secs[["thetaf"]]
write.csv(data.frame(method = names(secs), seconds = as.numeric(secs)), args[4], row.names = FALSE, quote = FALSE)
err <- if (length(errs)) do.call(rbind, errs) else
  data.frame(method = character(), series = character(), message = character())
write.csv(err, args[5], row.names = FALSE)
cat(sprintf("nn3.R: forecast %s %s\n", packageVersion("forecast"), R.version.string))
