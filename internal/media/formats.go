// Package media knows the file formats of the transcription service: which extensions it takes
// and whether they hold audio or video. The reference names about 73 extensions without listing
// them all; this is the list the sandbox accepts and the bridge checks before uploading.
package media

import "strings"

// Extensions, with the kind of media they hold.
var audioExts = []string{
	"mp3", "wav", "m4a", "aac", "ogg", "oga", "flac", "opus", "amr", "wma", "aiff", "aif", "aifc",
	"alac", "ape", "au", "snd", "caf", "mka", "mp2", "mpga", "m4b", "m4r", "3ga", "ac3", "eac3",
	"dts", "gsm", "spx", "wv", "tta", "voc", "ra", "awb", "weba", "amr-wb", "pcm",
}

var videoExts = []string{
	"mp4", "mov", "mkv", "avi", "webm", "mpeg", "mpg", "m4v", "wmv", "flv", "3gp", "3g2", "ogv",
	"ts", "mts", "m2ts", "vob", "asf", "divx", "f4v", "mxf", "dv", "rm", "rmvb", "qt", "m2v",
	"mpe", "mod", "tod", "h264", "hevc", "m1v", "mjpeg", "nut", "ogm", "yuv",
}

var kinds = func() map[string]string {
	m := map[string]string{}
	for _, e := range audioExts {
		m[e] = "audio"
	}
	for _, e := range videoExts {
		m[e] = "video"
	}
	return m
}()

// Kind returns "audio" or "video" for a supported extension (without the dot, any case), ""
// for an unsupported one.
func Kind(ext string) string { return kinds[strings.ToLower(ext)] }

// Ext returns the lower-case extension of name without the dot ("" when none).
func Ext(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || i == len(name)-1 {
		return ""
	}
	return strings.ToLower(name[i+1:])
}
