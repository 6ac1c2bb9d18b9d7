// Directory index pages captured from real servers (Apache 2.4.x mod_autoindex, nginx 1.22
// autoindex, python 3.11 http.server) serving the same folder: the awkward names of the
// conformance list plus a long name, "<lt>", "\"quote\"", "=eq", an empty file, a 1500-byte
// file and three folders. Apache served it at /files/, nginx at /files/, python at /.
// Captured with curl; see HTTPIndexParserTests for what each must parse to. nginx ends its lines
// with CRLF, which a Swift string literal cannot keep: use `nginxCRLF`.
import Foundation

enum IndexPageFixtures {
    static var nginxCRLF: String { nginx.replacingOccurrences(of: "\n", with: "\r\n") }

    static let apachePlain = #"""
<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<html>
 <head>
  <title>Index of /files</title>
 </head>
 <body>
<h1>Index of /files</h1>
<ul><li><a href="/"> Parent Directory</a></li>
<li><a href="%22quote%22"> &quot;quote&quot;</a></li>
<li><a href="%23hash"> #hash</a></li>
<li><a href="100%25"> 100%</a></li>
<li><a href="%3clt%3e"> &lt;lt&gt;</a></li>
<li><a href="=eq"> =eq</a></li>
<li><a href="a%20b"> a b</a></li>
<li><a href="a&amp;b"> a&amp;b</a></li>
<li><a href="a+b"> a+b</a></li>
<li><a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt"> averyveryveryverylongnamethatapachewilltruncateinthelisting.txt</a></li>
<li><a href="big.bin"> big.bin</a></li>
<li><a href="./co:lon"> co:lon</a></li>
<li><a href="dir%20a&amp;b/"> dir a&amp;b/</a></li>
<li><a href="empty"> empty</a></li>
<li><a href="it's"> it's</a></li>
<li><a href="semi;colon"> semi;colon</a></li>
<li><a href="sub/"> sub/</a></li>
<li><a href="tab%09here"> tab	here</a></li>
<li><a href="trailing%20dots..."> trailing dots...</a></li>
<li><a href="what%3f"> what?</a></li>
<li><a href="%c3%bcn%c3%af%20%e2%98%83%20dir/"> ünï ☃ dir/</a></li>
<li><a href="%c3%bcn%c3%afc%c3%b6d%c3%a9%20%e2%98%83"> ünïcödé ☃</a></li>
</ul>
</body></html>
"""#

    static let apacheFancyPre = #"""
<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<html>
 <head>
  <title>Index of /files</title>
 </head>
 <body>
<h1>Index of /files</h1>
<pre>      <a href="?C=N;O=D">Name</a>                    <a href="?C=M;O=A">Last modified</a>      <a href="?C=S;O=A">Size</a>  <a href="?C=D;O=A">Description</a><hr>      <a href="/">Parent Directory</a>                             -   
      <a href="%22quote%22">&quot;quote&quot;</a>                 2026-11-21 07:47   19   
      <a href="%23hash">#hash</a>                   2026-11-21 07:47   17   
      <a href="100%25">100%</a>                    2026-11-21 07:47   16   
      <a href="%3clt%3e">&lt;lt&gt;</a>                    2026-11-21 07:47   16   
      <a href="=eq">=eq</a>                     2026-11-21 07:47   15   
      <a href="a%20b">a b</a>                     2026-11-21 07:47   15   
      <a href="a&amp;b">a&amp;b</a>                     2026-11-21 07:47   15   
      <a href="a+b">a+b</a>                     2026-11-21 07:47   15   
      <a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt">averyveryveryverylon..&gt;</a> 2026-11-21 07:47   75   
      <a href="big.bin">big.bin</a>                 2026-11-21 07:47  1.5K  
      <a href="./co:lon">co:lon</a>                  2026-11-21 07:47   18   
      <a href="dir%20a&amp;b/">dir a&amp;b/</a>                2026-11-21 07:47    -   
      <a href="empty">empty</a>                   2026-11-21 07:47    0   
      <a href="it's">it's</a>                    2026-11-21 07:47   16   
      <a href="semi;colon">semi;colon</a>              2026-11-21 07:47   22   
      <a href="sub/">sub/</a>                    2026-11-21 07:47    -   
      <a href="tab%09here">tab	here</a>                2026-11-21 07:47   20   
      <a href="trailing%20dots...">trailing dots...</a>        2026-11-21 07:47   28   
      <a href="what%3f">what?</a>                   2026-11-21 07:47   17   
      <a href="%c3%bcn%c3%af%20%e2%98%83%20dir/">ünï ☃ dir/</a>          2026-11-21 07:47    -   
      <a href="%c3%bcn%c3%afc%c3%b6d%c3%a9%20%e2%98%83">ünïcödé ☃</a>         2026-11-21 07:47   27   
<hr></pre>
</body></html>
"""#

    static let apacheTable = #"""
<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<html>
 <head>
  <title>Index of /files</title>
 </head>
 <body>
<h1>Index of /files</h1>
  <table>
   <tr><th valign="top">&nbsp;</th><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last modified</a></th><th><a href="?C=S;O=A">Size</a></th><th><a href="?C=D;O=A">Description</a></th></tr>
   <tr><th colspan="5"><hr></th></tr>
<tr><td valign="top"><img src="/icons/folder.gif" alt="[PARENTDIR]"></td><td><a href="/">Parent Directory</a>       </td><td>&nbsp;</td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="%22quote%22">&quot;quote&quot;</a>                </td><td align="right">2026-11-21 07:47  </td><td align="right"> 19 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="%23hash">#hash</a>                  </td><td align="right">2026-11-21 07:47  </td><td align="right"> 17 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="100%25">100%</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right"> 16 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="%3clt%3e">&lt;lt&gt;</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right"> 16 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="=eq">=eq</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="a%20b">a b</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="a&amp;b">a&amp;b</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="a+b">a+b</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt">averyveryveryverylon..&gt;</a></td><td align="right">2026-11-21 07:47  </td><td align="right"> 75 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="big.bin">big.bin</a>                </td><td align="right">2026-11-21 07:47  </td><td align="right">1.5K</td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="./co:lon">co:lon</a>                 </td><td align="right">2026-11-21 07:47  </td><td align="right"> 18 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/folder.gif" alt="[DIR]"></td><td><a href="dir%20a&amp;b/">dir a&amp;b/</a>               </td><td align="right">2026-11-21 07:47  </td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="empty">empty</a>                  </td><td align="right">2026-11-21 07:47  </td><td align="right">  0 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="it's">it's</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right"> 16 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="semi;colon">semi;colon</a>             </td><td align="right">2026-11-21 07:47  </td><td align="right"> 22 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/folder.gif" alt="[DIR]"></td><td><a href="sub/">sub/</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="tab%09here">tab	here</a>               </td><td align="right">2026-11-21 07:47  </td><td align="right"> 20 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="trailing%20dots...">trailing dots...</a>       </td><td align="right">2026-11-21 07:47  </td><td align="right"> 28 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="what%3f">what?</a>                  </td><td align="right">2026-11-21 07:47  </td><td align="right"> 17 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/folder.gif" alt="[DIR]"></td><td><a href="%c3%bcn%c3%af%20%e2%98%83%20dir/">ünï ☃ dir/</a>         </td><td align="right">2026-11-21 07:47  </td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><img src="/icons/unknown.gif" alt="[   ]"></td><td><a href="%c3%bcn%c3%afc%c3%b6d%c3%a9%20%e2%98%83">ünïcödé ☃</a>        </td><td align="right">2026-11-21 07:47  </td><td align="right"> 27 </td><td>&nbsp;</td></tr>
   <tr><th colspan="5"><hr></th></tr>
</table>
</body></html>
"""#

    static let apacheTableIcons = #"""
<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">
<html>
 <head>
  <title>Index of /files</title>
 </head>
 <body>
<h1>Index of /files</h1>
  <table>
   <tr><th valign="top">&nbsp;</th><th><a href="?C=N;O=D">Name</a></th><th><a href="?C=M;O=A">Last modified</a></th><th><a href="?C=S;O=A">Size</a></th><th><a href="?C=D;O=A">Description</a></th></tr>
   <tr><th colspan="5"><hr></th></tr>
<tr><td valign="top"><a href="/"><img src="/icons/folder.gif" alt="[PARENTDIR]"></a></td><td><a href="/">Parent Directory</a>       </td><td>&nbsp;</td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="%22quote%22"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="%22quote%22">&quot;quote&quot;</a>                </td><td align="right">2026-11-21 07:47  </td><td align="right"> 19 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="%23hash"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="%23hash">#hash</a>                  </td><td align="right">2026-11-21 07:47  </td><td align="right"> 17 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="100%25"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="100%25">100%</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right"> 16 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="%3clt%3e"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="%3clt%3e">&lt;lt&gt;</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right"> 16 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="=eq"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="=eq">=eq</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="a%20b"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="a%20b">a b</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="a&amp;b"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="a&amp;b">a&amp;b</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="a+b"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="a+b">a+b</a>                    </td><td align="right">2026-11-21 07:47  </td><td align="right"> 15 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt">averyveryveryverylon..&gt;</a></td><td align="right">2026-11-21 07:47  </td><td align="right"> 75 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="big.bin"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="big.bin">big.bin</a>                </td><td align="right">2026-11-21 07:47  </td><td align="right">1.5K</td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="./co:lon"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="./co:lon">co:lon</a>                 </td><td align="right">2026-11-21 07:47  </td><td align="right"> 18 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="dir%20a&amp;b/"><img src="/icons/folder.gif" alt="[DIR]"></a></td><td><a href="dir%20a&amp;b/">dir a&amp;b/</a>               </td><td align="right">2026-11-21 07:47  </td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="empty"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="empty">empty</a>                  </td><td align="right">2026-11-21 07:47  </td><td align="right">  0 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="it's"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="it's">it's</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right"> 16 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="semi;colon"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="semi;colon">semi;colon</a>             </td><td align="right">2026-11-21 07:47  </td><td align="right"> 22 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="sub/"><img src="/icons/folder.gif" alt="[DIR]"></a></td><td><a href="sub/">sub/</a>                   </td><td align="right">2026-11-21 07:47  </td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="tab%09here"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="tab%09here">tab	here</a>               </td><td align="right">2026-11-21 07:47  </td><td align="right"> 20 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="trailing%20dots..."><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="trailing%20dots...">trailing dots...</a>       </td><td align="right">2026-11-21 07:47  </td><td align="right"> 28 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="what%3f"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="what%3f">what?</a>                  </td><td align="right">2026-11-21 07:47  </td><td align="right"> 17 </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="%c3%bcn%c3%af%20%e2%98%83%20dir/"><img src="/icons/folder.gif" alt="[DIR]"></a></td><td><a href="%c3%bcn%c3%af%20%e2%98%83%20dir/">ünï ☃ dir/</a>         </td><td align="right">2026-11-21 07:47  </td><td align="right">  - </td><td>&nbsp;</td></tr>
<tr><td valign="top"><a href="%c3%bcn%c3%afc%c3%b6d%c3%a9%20%e2%98%83"><img src="/icons/unknown.gif" alt="[   ]"></a></td><td><a href="%c3%bcn%c3%afc%c3%b6d%c3%a9%20%e2%98%83">ünïcödé ☃</a>        </td><td align="right">2026-11-21 07:47  </td><td align="right"> 27 </td><td>&nbsp;</td></tr>
   <tr><th colspan="5"><hr></th></tr>
</table>
</body></html>
"""#

    static let nginx = #"""
<html>
<head><title>Index of /files/</title></head>
<body>
<h1>Index of /files/</h1><hr><pre><a href="../">../</a>
<a href="dir%20a%26b/">dir a&amp;b/</a>                                           21-Nov-2026 07:47                   -
<a href="sub/">sub/</a>                                               21-Nov-2026 07:47                   -
<a href="%C3%BCn%C3%AF%20%E2%98%83%20dir/">ünï ☃ dir/</a>                                     21-Nov-2026 07:47                   -
<a href="%22quote%22">&quot;quote&quot;</a>                                            21-Nov-2026 07:47                  19
<a href="%23hash">#hash</a>                                              21-Nov-2026 07:47                  17
<a href="100%25">100%</a>                                               21-Nov-2026 07:47                  16
<a href="%3Clt%3E">&lt;lt&gt;</a>                                               21-Nov-2026 07:47                  16
<a href="%3Deq">=eq</a>                                                21-Nov-2026 07:47                  15
<a href="a%20b">a b</a>                                                21-Nov-2026 07:47                  15
<a href="a%26b">a&amp;b</a>                                                21-Nov-2026 07:47                  15
<a href="a%2Bb">a+b</a>                                                21-Nov-2026 07:47                  15
<a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt">averyveryveryverylongnamethatapachewilltruncate..&gt;</a> 21-Nov-2026 07:47                  75
<a href="big.bin">big.bin</a>                                            21-Nov-2026 07:47                1500
<a href="co%3Alon">co:lon</a>                                             21-Nov-2026 07:47                  18
<a href="empty">empty</a>                                              21-Nov-2026 07:47                   0
<a href="it%27s">it's</a>                                               21-Nov-2026 07:47                  16
<a href="semi%3Bcolon">semi;colon</a>                                         21-Nov-2026 07:47                  22
<a href="tab%09here">tab	here</a>                                           21-Nov-2026 07:47                  20
<a href="trailing%20dots...">trailing dots...</a>                                   21-Nov-2026 07:47                  28
<a href="what%3F">what?</a>                                              21-Nov-2026 07:47                  17
<a href="%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%E2%98%83">ünïcödé ☃</a>                                    21-Nov-2026 07:47                  27
</pre><hr></body>
</html>
"""#

    static let python = #"""
<!DOCTYPE HTML>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Directory listing for /</title>
</head>
<body>
<h1>Directory listing for /</h1>
<hr>
<ul>
<li><a href="%22quote%22">"quote"</a></li>
<li><a href="%23hash">#hash</a></li>
<li><a href="100%25">100%</a></li>
<li><a href="%3Clt%3E">&lt;lt&gt;</a></li>
<li><a href="%3Deq">=eq</a></li>
<li><a href="a%20b">a b</a></li>
<li><a href="a%26b">a&amp;b</a></li>
<li><a href="a%2Bb">a+b</a></li>
<li><a href="averyveryveryverylongnamethatapachewilltruncateinthelisting.txt">averyveryveryverylongnamethatapachewilltruncateinthelisting.txt</a></li>
<li><a href="big.bin">big.bin</a></li>
<li><a href="co%3Alon">co:lon</a></li>
<li><a href="dir%20a%26b/">dir a&amp;b/</a></li>
<li><a href="empty">empty</a></li>
<li><a href="it%27s">it's</a></li>
<li><a href="semi%3Bcolon">semi;colon</a></li>
<li><a href="sub/">sub/</a></li>
<li><a href="tab%09here">tab	here</a></li>
<li><a href="trailing%20dots...">trailing dots...</a></li>
<li><a href="what%3F">what?</a></li>
<li><a href="%C3%BCn%C3%AF%20%E2%98%83%20dir/">ünï ☃ dir/</a></li>
<li><a href="%C3%BCn%C3%AFc%C3%B6d%C3%A9%20%E2%98%83">ünïcödé ☃</a></li>
</ul>
<hr>
</body>
</html>
"""#

}
