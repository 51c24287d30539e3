#ifndef PARLEY_CALSA_SHIM_H
#define PARLEY_CALSA_SHIM_H
// alsa-lib (libasound2) for ParleyAudioDeviceLinux. Most of the PCM API imports into Swift
// as it is; what does not is alsa-lib's error reporting: its log handler is a C function
// taking a va_list, which Swift cannot implement. The wrappers below catch alsa-lib's log
// lines on the calling thread only (snd_lib_error_set_local is thread-local), so that an
// error can carry alsa-lib's own explanation ("Unknown PCM nosuchdevice", where
// snd_strerror only says "No such file or directory") instead of it going to stderr.
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

// The last line alsa-lib logged on this thread while the catcher was installed.
static inline char *parley_alsa_log_buffer(void) {
    static _Thread_local char text[512];
    return text;
}

static inline void parley_alsa_log_catcher(const char *file, int line, const char *function, int err,
                                           const char *format, va_list arguments) {
    (void)file; (void)line; (void)function; (void)err;
    vsnprintf(parley_alsa_log_buffer(), 512, format, arguments);
}

// Routes this thread's alsa-lib log lines into parley_alsa_log_buffer (clearing it) until
// the returned previous handler is given back to parley_alsa_restore_log.
static inline snd_local_error_handler_t parley_alsa_catch_log(void) {
    parley_alsa_log_buffer()[0] = '\0';
    return snd_lib_error_set_local(parley_alsa_log_catcher);
}

static inline void parley_alsa_restore_log(snd_local_error_handler_t previous) {
    snd_lib_error_set_local(previous);
}

// The last caught line ("" if none).
static inline const char *parley_alsa_last_log(void) {
    return parley_alsa_log_buffer();
}

#endif
