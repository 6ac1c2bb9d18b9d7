// JPEG in, PNG out, for freedesktop thumbnails: libjpeg-turbo decodes the remote's preview,
// libpng writes the thumbnail with its tEXt keys. Both report errors by longjmp, which must
// not cross into Swift, so each call is wrapped here and returns an error text instead.
#ifndef FAVFS_CIMAGE_SHIM_H
#define FAVFS_CIMAGE_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <png.h>

struct favfs_jpeg_error {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void favfs_jpeg_error_exit(j_common_ptr info) {
    struct favfs_jpeg_error *e = (struct favfs_jpeg_error *)info->err;
    (*info->err->format_message)(info, e->message);
    longjmp(e->jump, 1);
}

static void favfs_jpeg_silent(j_common_ptr info) { (void)info; }

/// Decodes a JPEG into 8-bit RGB rows. On success returns a malloc'ed buffer of
/// width*height*3 bytes (free it with favfs_image_free) and sets *width and *height;
/// on failure returns NULL with the reason in `error`.
static inline unsigned char *favfs_jpeg_decode_rgb(const unsigned char *data, size_t length,
                                                   int *width, int *height, char *error, size_t error_size) {
    struct jpeg_decompress_struct info;
    struct favfs_jpeg_error err;
    unsigned char *volatile pixels = NULL;
    info.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = favfs_jpeg_error_exit;
    err.mgr.output_message = favfs_jpeg_silent;
    err.message[0] = 0;
    if (setjmp(err.jump)) {
        snprintf(error, error_size, "not a JPEG libjpeg can read: %s", err.message);
        jpeg_destroy_decompress(&info);
        free(pixels);
        return NULL;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)length);
    jpeg_read_header(&info, TRUE);
    info.out_color_space = JCS_RGB;
    jpeg_start_decompress(&info);
    if (info.output_width == 0 || info.output_height == 0 || info.output_width > 16384 || info.output_height > 16384) {
        snprintf(error, error_size, "absurd JPEG size %ux%u", info.output_width, info.output_height);
        jpeg_destroy_decompress(&info);
        return NULL;
    }
    size_t stride = (size_t)info.output_width * 3;
    pixels = malloc(stride * info.output_height);
    if (!pixels) { snprintf(error, error_size, "out of memory"); jpeg_destroy_decompress(&info); return NULL; }
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + stride * info.output_scanline;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    *width = (int)info.output_width;
    *height = (int)info.output_height;
    return pixels;
}

static inline void favfs_image_free(unsigned char *pixels) { free(pixels); }

static void favfs_png_error(png_structp png, png_const_charp message) {
    char *error = (char *)png_get_error_ptr(png);
    if (error) snprintf(error, 256, "%s", message);
    png_longjmp(png, 1);
}

static void favfs_png_warning(png_structp png, png_const_charp message) { (void)png; (void)message; }

/// Writes 8-bit RGB rows as a PNG to `path` with `count` tEXt chunks (keys[i] = values[i]).
/// Returns 0, or -1 with the reason in `error` (at least 256 bytes).
static inline int favfs_png_write_rgb(const char *path, const unsigned char *pixels, int width, int height,
                                      const char *const *keys, const char *const *values, int count, char *error) {
    FILE *volatile file = fopen(path, "wbe");
    if (!file) { snprintf(error, 256, "cannot create %s", path); return -1; }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, error, favfs_png_error, favfs_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_textp volatile text = calloc((size_t)(count > 0 ? count : 1), sizeof(png_text));
    if (!png || !info || !text) {
        snprintf(error, 256, "out of memory");
        if (png) png_destroy_write_struct(&png, info ? &info : NULL);
        free(text);
        fclose(file);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(text);
        fclose(file);
        return -1;
    }
    png_init_io(png, file);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    for (int i = 0; i < count; i++) {
        text[i].compression = PNG_TEXT_COMPRESSION_NONE;
        text[i].key = (png_charp)keys[i];
        text[i].text = (png_charp)values[i];
    }
    png_set_text(png, info, text, count);
    png_write_info(png, info);
    for (int y = 0; y < height; y++) png_write_row(png, (png_const_bytep)(pixels + (size_t)y * (size_t)width * 3));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(text);
    if (fclose(file) != 0) { snprintf(error, 256, "cannot write %s", path); return -1; }
    return 0;
}

#endif
