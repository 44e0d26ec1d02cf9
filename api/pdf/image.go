package pdf

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"sync"

	"github.com/srwiley/oksvg"
	"github.com/srwiley/rasterx"
	"golang.org/x/image/draw"
)

// Image is a picture ready to embed: a JPEG as it is (DCTDecode), anything
// else as compressed RGB with its alpha as a soft mask. It is read-only,
// so one decoded logo serves every document.
type Image struct {
	W, H  int
	dct   bool   // data is a JPEG
	gray  bool   // one component
	data  []byte // JPEG bytes, or RGB (or gray) samples
	alpha []byte // nil when opaque
}

// maxSide is the largest side a decoded image keeps: a logo is printed a
// few centimetres wide, so more pixels only make the PDF bigger.
const maxSide = 800

// images keeps the images decoded lately, by content, so a logo is decoded
// once and not for every document.
var images struct {
	sync.Mutex
	m map[[32]byte]*Image
}

// LoadImage reads a PNG, JPEG or SVG (mediaType image/png, image/jpeg or
// image/svg+xml).
func LoadImage(mediaType string, data []byte) (*Image, error) {
	key := sha256.Sum256(append([]byte(mediaType+"\x00"), data...))
	images.Lock()
	im := images.m[key]
	images.Unlock()
	if im != nil {
		return im, nil
	}
	im, err := loadImage(mediaType, data)
	if err != nil {
		return nil, err
	}
	images.Lock()
	if images.m == nil || len(images.m) >= 16 {
		images.m = map[[32]byte]*Image{}
	}
	images.m[key] = im
	images.Unlock()
	return im, nil
}

func loadImage(mediaType string, data []byte) (*Image, error) {
	switch mediaType {
	case "image/jpeg":
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("pdf: JPEG: %w", err)
		}
		switch cfg.ColorModel {
		case color.YCbCrModel, color.RGBAModel:
			if cfg.Width <= maxSide && cfg.Height <= maxSide {
				return &Image{W: cfg.Width, H: cfg.Height, dct: true, data: data}, nil
			}
		case color.GrayModel:
			if cfg.Width <= maxSide && cfg.Height <= maxSide {
				return &Image{W: cfg.Width, H: cfg.Height, dct: true, gray: true, data: data}, nil
			}
		}
		img, err := jpeg.Decode(bytes.NewReader(data)) // CMYK or too large: encoded again
		if err != nil {
			return nil, fmt.Errorf("pdf: JPEG: %w", err)
		}
		img = fit(img)
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
			return nil, fmt.Errorf("pdf: JPEG: %w", err)
		}
		return &Image{W: img.Bounds().Dx(), H: img.Bounds().Dy(), dct: true, data: b.Bytes()}, nil
	case "image/png":
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("pdf: PNG: %w", err)
		}
		return fromImage(img), nil
	case "image/svg+xml":
		icon, err := oksvg.ReadIconStream(bytes.NewReader(data), oksvg.IgnoreErrorMode)
		if err != nil {
			return nil, fmt.Errorf("pdf: SVG: %w", err)
		}
		vw, vh := icon.ViewBox.W, icon.ViewBox.H
		if vw <= 0 || vh <= 0 {
			return nil, errors.New("pdf: SVG has no size")
		}
		scale := maxSide / max(vw, vh)
		w, h := int(vw*scale+0.5), int(vh*scale+0.5)
		img := image.NewRGBA(image.Rect(0, 0, max(w, 1), max(h, 1)))
		icon.SetTarget(0, 0, float64(w), float64(h))
		icon.Draw(rasterx.NewDasher(w, h, rasterx.NewScannerGV(w, h, img, img.Bounds())), 1)
		return fromImage(img), nil
	}
	return nil, fmt.Errorf("pdf: %q is not an image type this writer reads", mediaType)
}

// fit is img no larger than maxSide.
func fit(img image.Image) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= maxSide && h <= maxSide {
		return img
	}
	s := float64(maxSide) / float64(max(w, h))
	dst := image.NewNRGBA(image.Rect(0, 0, max(1, int(float64(w)*s)), max(1, int(float64(h)*s))))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// fromImage is img as RGB samples and alpha, no larger than maxSide.
func fromImage(img image.Image) *Image {
	img = fit(img)
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	rgb := make([]byte, 0, 3*w*h)
	alpha := make([]byte, 0, w*h)
	opaque := true
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			rgb = append(rgb, c.R, c.G, c.B)
			alpha = append(alpha, c.A)
			opaque = opaque && c.A == 255
		}
	}
	im := &Image{W: w, H: h, data: deflate(rgb)}
	if !opaque {
		im.alpha = deflate(alpha)
	}
	return im
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	z, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	z.Write(b)
	z.Close()
	return buf.Bytes()
}

func (im *Image) write(w *writer, id int) {
	cs := "/DeviceRGB"
	if im.gray {
		cs = "/DeviceGray"
	}
	dict := fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace %s /BitsPerComponent 8", im.W, im.H, cs)
	if im.alpha != nil {
		mask := w.alloc()
		w.obj(mask, fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", im.W, im.H), im.alpha)
		dict += fmt.Sprintf(" /SMask %d 0 R", mask)
	}
	if im.dct {
		w.obj(id, dict+" /Filter /DCTDecode", im.data)
		return
	}
	w.obj(id, dict+" /Filter /FlateDecode", im.data)
}
