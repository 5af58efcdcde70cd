# Half-hourly load side of the comparison harness (bench/compare, suite
# load): R forecast package methods for a series of two seasons.
#
# Usage: Rscript load.R LIST.csv H FORECASTS.csv TIMES.csv ERRORS.csv
#   LIST.csv      series,path: one cut per row, each path a file of its
#                 training values, one per line
#   FORECASTS.csv written: method,series,h,mean,lo,hi
#   TIMES.csv     written: method,seconds
#   ERRORS.csv    written: method,series,message for each failed fit
#
# Methods: stlf on msts(y, c(48, 336)) (mstl's two seasons removed, ets on
# the rest, seasons added back: forecast's method for several seasons), and
# the seasonal naive forecasts a day and a week before (snaive with
# frequency 48 and 336). auto.arima, ets and thetaf take one season of at
# most 24 (ets) or are impractical on 30 000 values with a period of 336.
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 5) stop("usage: Rscript load.R LIST.csv H FORECASTS.csv TIMES.csv ERRORS.csv")
lst <- read.csv(args[1], stringsAsFactors = FALSE)
H <- as.integer(args[2])

fits <- list(
  stlf        = function(x) stlf(msts(x, seasonal.periods = c(48, 336)), h = H, level = 95),
  snaive.day  = function(x) snaive(ts(x, frequency = 48), h = H, level = 95),
  snaive.week = function(x) snaive(ts(x, frequency = 336), h = H, level = 95)
)

rows <- list()
errs <- list()
secs <- setNames(numeric(length(fits)), names(fits))
for (i in seq_len(nrow(lst))) {
  name <- lst$series[i]
  x <- scan(lst$path[i], quiet = TRUE)
  for (m in names(fits)) {
    t0 <- proc.time()[["elapsed"]]
    fc <- tryCatch(fits[[m]](x), error = function(e) e)
    secs[[m]] <- secs[[m]] + proc.time()[["elapsed"]] - t0
    if (inherits(fc, "error")) {
      errs[[length(errs) + 1]] <- data.frame(method = m, series = name, message = conditionMessage(fc))
      next
    }
    rows[[length(rows) + 1]] <- data.frame(method = m, series = name, h = seq_len(H),
                                           mean = as.numeric(fc$mean), lo = as.numeric(fc$lower[, 1]),
                                           hi = as.numeric(fc$upper[, 1]))
  }
}
out <- if (length(rows)) do.call(rbind, rows) else
  data.frame(method = character(), series = character(), h = integer(),
             mean = numeric(), lo = numeric(), hi = numeric())
write.csv(out, args[3], row.names = FALSE, quote = FALSE)
write.csv(data.frame(method = names(secs), seconds = as.numeric(secs)), args[4], row.names = FALSE, quote = FALSE)
err <- if (length(errs)) do.call(rbind, errs) else
  data.frame(method = character(), series = character(), message = character())
write.csv(err, args[5], row.names = FALSE)
cat(sprintf("load.R: forecast %s %s\n", packageVersion("forecast"), R.version.string))
