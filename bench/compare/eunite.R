# EUNITE side of the comparison harness (bench/compare): R forecast package
# methods on the daily maximum load, forecasting the H days after the first
# TRAIN rows of the file the harness built (the same file streamd reads).
#
# Usage: Rscript eunite.R DATA.csv TRAIN H FORECASTS.csv TIMES.csv ERRORS.csv
#   DATA.csv      date,load,holiday,temperature (rows TRAIN+1..TRAIN+H carry
#                 the known-in-advance holiday flag and the temperature
#                 climatology; their load is not used here)
#   FORECASTS.csv written: method,series,h,mean,lo,hi (series = "eunite")
#   TIMES.csv     written: method,seconds
#   ERRORS.csv    written: method,series,message for each failed fit
#
# The load is ts(load, frequency = 7). Methods:
#   arima+xreg  regression with ARIMA errors: auto.arima(y, xreg = X) with X =
#               six weekday dummies (Monday..Saturday against Sunday), the
#               holiday flag, the temperature and yearly Fourier terms
#               sin/cos(2πk·d/365.25), k = 1..3, d = days since 1997-01-01
#   ets         ets(y)
#   thetaf      thetaf(y)
#   comb        mean of the three point forecasts; band: mean of their lower
#               and of their upper 95 % bounds
#   snaive      snaive(y) (weekly seasonal naive)
suppressPackageStartupMessages(library(forecast))

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 6) stop("usage: Rscript eunite.R DATA.csv TRAIN H FORECASTS.csv TIMES.csv ERRORS.csv")
d <- read.csv(args[1], stringsAsFactors = FALSE)
n <- as.integer(args[2])
H <- as.integer(args[3])
if (nrow(d) < n + H) stop(sprintf("%s has %d rows, need TRAIN + H = %d", args[1], nrow(d), n + H))

date <- as.Date(d$date)
wday <- factor(as.POSIXlt(date)$wday, levels = 0:6) # 0 = Sunday
day <- as.numeric(date - as.Date("1997-01-01"))
K <- 3
fourier_terms <- do.call(cbind, lapply(seq_len(K), function(k)
  cbind(sin(2 * pi * k * day / 365.25), cos(2 * pi * k * day / 365.25))))
colnames(fourier_terms) <- paste0(rep(c("S", "C"), K), rep(seq_len(K), each = 2))
X <- cbind(model.matrix(~wday)[, -1], holiday = d$holiday, temperature = d$temperature, fourier_terms)
y <- ts(d$load[seq_len(n)], frequency = 7)
Xtrain <- X[seq_len(n), ]
Xfuture <- X[n + seq_len(H), ]

fits <- list(
  "arima+xreg" = function() forecast(auto.arima(y, xreg = Xtrain), xreg = Xfuture, h = H, level = 95),
  ets          = function() forecast(ets(y), h = H, level = 95),
  thetaf       = function() thetaf(y, h = H, level = 95),
  snaive       = function() snaive(y, h = H, level = 95)
)

res <- list()
errs <- list()
secs <- setNames(numeric(length(fits)), names(fits))
for (m in names(fits)) {
  t0 <- proc.time()[["elapsed"]]
  fc <- tryCatch(fits[[m]](), error = function(e) e)
  secs[[m]] <- proc.time()[["elapsed"]] - t0
  if (inherits(fc, "error")) {
    errs[[length(errs) + 1]] <- data.frame(method = m, series = "eunite", message = conditionMessage(fc))
    next
  }
  if (m == "arima+xreg") message("eunite.R: arima+xreg: ", fc$method)
  res[[m]] <- data.frame(mean = as.numeric(fc$mean), lo = as.numeric(fc$lower[, 1]), hi = as.numeric(fc$upper[, 1]))
}
parts <- res[c("arima+xreg", "ets", "thetaf")]
if (all(!vapply(parts, is.null, logical(1)))) {
  res[["comb"]] <- data.frame(mean = rowMeans(sapply(parts, function(p) p$mean)),
                              lo = rowMeans(sapply(parts, function(p) p$lo)),
                              hi = rowMeans(sapply(parts, function(p) p$hi)))
} else {
  errs[[length(errs) + 1]] <- data.frame(method = "comb", series = "eunite", message = "a component method failed")
}
secs[["comb"]] <- secs[["arima+xreg"]] + secs[["ets"]] + secs[["thetaf"]]

rows <- lapply(names(res), function(m) data.frame(method = m, series = "eunite", h = seq_len(nrow(res[[m]])),
                                                  mean = res[[m]]$mean, lo = res[[m]]$lo, hi = res[[m]]$hi))
out <- if (length(rows)) do.call(rbind, rows) else
  data.frame(method = character(), series = character(), h = integer(),
             mean = numeric(), lo = numeric(), hi = numeric())
write.csv(out, args[4], row.names = FALSE, quote = FALSE)
write.csv(data.frame(method = names(secs), seconds = as.numeric(secs)), args[5], row.names = FALSE, quote = FALSE)
err <- if (length(errs)) do.call(rbind, errs) else
  data.frame(method = character(), series = character(), message = character())
write.csv(err, args[6], row.names = FALSE)
cat(sprintf("eunite.R: forecast %s %s\n", packageVersion("forecast"), R.version.string))
