import BirthdayBuzz
import CurlSupport
import CDBus
