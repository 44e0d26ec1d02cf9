// Package fonts holds the fonts documents are set in, embedded into the
// binary so a PDF needs nothing installed: Noto Sans for Latin and Noto
// Sans Arabic for Arabic, Regular and Bold, from Debian's fonts-noto-core,
// unmodified, under the SIL Open Font License 1.1 (OFL.txt).
package fonts

import _ "embed"

var (
	//go:embed NotoSans-Regular.ttf
	SansRegular []byte
	//go:embed NotoSans-Bold.ttf
	SansBold []byte
	//go:embed NotoSansArabic-Regular.ttf
	ArabicRegular []byte
	//go:embed NotoSansArabic-Bold.ttf
	ArabicBold []byte
)

// License is the fonts' licence, to ship beside them.
//
//go:embed OFL.txt
var License string
