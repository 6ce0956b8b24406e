// libavformat, libavcodec, libavutil (libavformat-dev, libavcodec-dev, libavutil-dev): container
// probing in the media-formats plugin only; the host never links them.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/pixdesc.h>
#include <libavutil/dovi_meta.h>
#include <libavutil/mastering_display_metadata.h>
#include <errno.h>

// Macros Swift cannot import.
static inline int castline_averror_eof(void) { return AVERROR_EOF; }
static inline int castline_averror_exit(void) { return AVERROR_EXIT; }
static inline int64_t castline_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int castline_av_time_base(void) { return AV_TIME_BASE; }
static inline int castline_avseek_size(void) { return AVSEEK_SIZE; }
