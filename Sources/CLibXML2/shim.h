// libxml2's SAX2 push parser, used directly for WebDAV multistatus bodies: Foundation's
// XMLParser turns every element name into a Swift String and a dictionary on the way.
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU; its headers would bring ICU's, which clash with the copy
// Foundation carries. Only xmlCharEncodingHandler's layout depends on it, and favfs never
// touches one (nor does it hand libxml2 anything but bytes to parse).
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/SAX2.h>
