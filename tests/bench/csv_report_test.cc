#include "csv_report.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "report_rows.h"

namespace hoop::perf {
namespace {

using testing::row;

TEST(CsvReport, HeaderNamesEveryColumnOnce) {
  EXPECT_EQ(csvHeader(),
            "collective,algorithm,transport,memory,size_bytes,count,type,redop,root,"
            "oop_time_us,oop_algbw_gbs,oop_busbw_gbs,oop_wrong,oop_median_us,oop_p99_us,"
            "oop_min_us,oop_max_us,"
            "ip_time_us,ip_algbw_gbs,ip_busbw_gbs,ip_wrong,ip_median_us,ip_p99_us,ip_min_us,"
            "ip_max_us\n");
}

TEST(CsvReport, RowInHeaderOrder) {
  EXPECT_EQ(csvRow(row("ring", 1024, 3.0)),
            "allreduce,ring,tcp,host,1024,256,float,sum,-1,"
            "10.5,1.5,3,0,10,14.5,9.5,18.5,"
            "12.25,0.75,1.5,0,11.75,16.25,11.25,20.25\n");
}

TEST(CsvReport, UncheckedWrongIsEmpty) {
  RowResult r = row("direct", 8, 0.5);
  r.outOfPlace.wrong.reset();
  r.inPlace.wrong = 7;
  const std::string line = csvRow(r);
  EXPECT_NE(line.find(",0.25,0.5,,10,"), std::string::npos) << line;
  EXPECT_NE(line.find(",0.25,7,11.75,"), std::string::npos) << line;
}

TEST(CsvReport, SameColumnCountInHeaderAndRows) {
  auto columns = [](const std::string& line) { return std::count(line.begin(), line.end(), ','); };
  EXPECT_EQ(columns(csvHeader()), columns(csvRow(row("ring", 8, 1.0))));
}

TEST(CsvReport, ReportIsHeaderThenRows) {
  const std::vector<RowResult> rows = {row("ring", 8, 1.0), row("direct", 8, 2.0)};
  EXPECT_EQ(formatCsvReport(rows), csvHeader() + csvRow(rows[0]) + csvRow(rows[1]));
  EXPECT_EQ(formatCsvReport({}), csvHeader());
}

TEST(CsvField, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csvField("float"), "float");
  EXPECT_EQ(csvField(""), "");
  EXPECT_EQ(csvField("a,b"), "\"a,b\"");
  EXPECT_EQ(csvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csvField("cr\r"), "\"cr\r\"");
}

}  // namespace
}  // namespace hoop::perf
